/**
 * A tiny browser for sign-in tests: real HTTP (fetch), a cookie jar that
 * keeps cookies per host name and path like a browser (ports do not separate
 * cookies), redirects followed by hand so every hop's cookies are kept, and
 * form posts. Enough to walk terdut → provider login → consent → callback.
 */

interface StoredCookie {
  name: string;
  value: string;
  host: string;
  path: string;
  httpOnly: boolean;
}

export interface Page {
  status: number;
  url: string;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
  /** Every URL visited on the way here, first to last. */
  hops: string[];
}

export class TestBrowser {
  #cookies: StoredCookie[] = [];

  /** GETs `url` and follows redirects. */
  get(url: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.#navigate(url, { method: 'GET', headers });
  }

  /** POSTs an HTML form (urlencoded) and follows redirects, as a browser submitting a form. */
  submitForm(url: string, fields: Record<string, string>): Promise<Page> {
    return this.#navigate(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** A JSON request as the web UI's fetch() would make it (no redirect following). */
  async fetchJson(
    url: string,
    options: { method: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Page> {
    const headers: Record<string, string> = { ...options.headers, cookie: this.#cookieHeader(url) };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url, {
      method: options.method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      redirect: 'manual',
    });
    this.#store(url, response.headers);
    return toPage(url, response, [url]);
  }

  /** The value of a cookie the browser holds for `url`'s host (undefined when none). */
  cookie(url: string, name: string): string | undefined {
    return this.#matching(url).find((cookie) => cookie.name === name)?.value;
  }

  /** Fills in and submits the first form on `page` (resolving its action against the page URL). */
  submitFirstForm(page: Page, fields: Record<string, string>): Promise<Page> {
    const action = /<form[^>]*action="([^"]*)"/i.exec(page.text)?.[1];
    if (action === undefined) throw new Error(`no form on ${page.url}: ${page.text.slice(0, 300)}`);
    return this.submitForm(new URL(action.replaceAll('&amp;', '&'), page.url).toString(), fields);
  }

  async #navigate(url: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    const hops: string[] = [];
    let current = url;
    let request = init;
    for (let redirects = 0; redirects < 20; redirects++) {
      hops.push(current);
      const response = await fetch(current, {
        method: request.method,
        headers: { ...request.headers, cookie: this.#cookieHeader(current) },
        body: request.body,
        redirect: 'manual',
      });
      this.#store(current, response.headers);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.arrayBuffer();
        current = new URL(location, current).toString();
        // 303 (and, as browsers do, 301/302 after a POST) continue as GET.
        request = { method: 'GET', headers: {} };
        continue;
      }
      return toPage(current, response, hops);
    }
    throw new Error(`too many redirects from ${url}: ${hops.join(' -> ')}`);
  }

  #matching(url: string): StoredCookie[] {
    const { hostname, pathname } = new URL(url);
    return this.#cookies.filter(
      (cookie) =>
        cookie.host === hostname &&
        (pathname === cookie.path ||
          pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : cookie.path + '/')),
    );
  }

  #cookieHeader(url: string): string {
    return this.#matching(url)
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join('; ');
  }

  #store(url: string, headers: Headers): void {
    const { hostname } = new URL(url);
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const equals = pair.indexOf('=');
      const name = pair.slice(0, equals);
      const value = pair.slice(equals + 1);
      let path = '/';
      let expired = value === '';
      let httpOnly = false;
      for (const attribute of attributes) {
        const [key = '', attributeValue = ''] = attribute.split('=');
        const lower = key.toLowerCase();
        if (lower === 'path') path = attributeValue;
        if (lower === 'max-age' && Number(attributeValue) <= 0) expired = true;
        if (lower === 'expires' && new Date(attributeValue).getTime() < Date.now()) expired = true;
        if (lower === 'httponly') httpOnly = true;
      }
      this.#cookies = this.#cookies.filter(
        (cookie) => !(cookie.name === name && cookie.host === hostname && cookie.path === path),
      );
      if (!expired) this.#cookies.push({ name, value, host: hostname, path, httpOnly });
    }
  }
}

async function toPage(url: string, response: Response, hops: string[]): Promise<Page> {
  const text = await response.text();
  let json: unknown;
  if ((response.headers.get('content-type') ?? '').includes('json') && text.length > 0)
    json = JSON.parse(text);
  return { status: response.status, url, headers: response.headers, text, json, hops };
}
