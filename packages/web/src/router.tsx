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
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
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
