/**
 * Session storage (this tab, until it closes) that never throws: where the
 * browser refuses storage (a privacy mode) or it is full, what would have
 * been kept lasts only as long as the page.
 */
function store(): Storage | undefined {
  try {
    return sessionStorage;
  } catch {
    return undefined;
  }
}

export function readSession(key: string): string | undefined {
  return store()?.getItem(key) ?? undefined;
}

export function writeSession(key: string, value: string): void {
  try {
    store()?.setItem(key, value);
  } catch {
    // Full: kept for the page only.
  }
}

export function removeSession(key: string): void {
  store()?.removeItem(key);
}

/** Removes every key that starts with `prefix`. */
export function removeSessionPrefixed(prefix: string): void {
  const tab = store();
  if (!tab) return;
  for (const key of Object.keys(tab)) if (key.startsWith(prefix)) tab.removeItem(key);
}
