/** A small history-API router: the server answers the app for every non-API path, so any URL is a deep link. */
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();

/**
 * Where the page Back (or Forward) returned to had been read, until the page
 * takes it (useScrollRestored). The browser's own restoring runs before a
 * page's list has loaded again, and lands at the top.
 */
let scrollToRestore: number | undefined;
window.addEventListener('popstate', (event) => {
  const state = event.state as { scrollY?: unknown } | null;
  scrollToRestore = typeof state?.scrollY === 'number' ? state.scrollY : undefined;
  listeners.forEach((listener) => listener());
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  scrollToRestore = undefined;
  if (options.replace) history.replaceState(null, '', to);
  else {
    // Kept with the page being left, for Back.
    history.replaceState({ ...(history.state as object | null), scrollY: window.scrollY }, '');
    history.pushState(null, '', to);
  }
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
}

/** Once the page's content is back (`ready`) after Back or Forward, scrolls to where it had been read. */
export function useScrollRestored(ready: boolean): void {
  useEffect(() => {
    if (!ready || scrollToRestore === undefined) return;
    window.scrollTo(0, scrollToRestore);
    scrollToRestore = undefined;
  }, [ready]);
}

export function useLocation(): Location {
  const [where, setWhere] = useState(current);
  useEffect(() => {
    const update = () => setWhere(current());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return where;
}

/** An `<a>` that navigates inside the app (ctrl/middle click still opens a tab). */
export function Link(props: {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | 'true';
  'aria-describedby'?: string;
}) {
  const { href, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
