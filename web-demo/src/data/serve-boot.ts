/**
 * What the viewer's page asks of its server before the app's code has loaded (main.ts), so the
 * answers arrive while it loads: `GET api/stores` (is this `sessionkit serve`, and with which
 * stores) and the first bytes of the session the address names. The token comes from the printed
 * URL's `?token=` once and is kept in sessionStorage: that is this origin's (scheme, host and
 * port, so no other local server reads it, as it would a cookie) and this tab's, and it survives
 * a reload. No imports: this is part of the page's first script.
 */

export const TOKEN_KEY = "sessionkit-serve.token";

/** The token of the printed URL (`?token=`), else the one this tab kept. */
export function pageToken(page: string = location.href): string | undefined {
  return new URL(page).searchParams.get("token") ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/**
 * `GET api/stores` of this page's server: its answer when it is JSON (a `sessionkit serve`, its
 * stores or its refusal of the token), else null (a static host answers 404, or its index.html).
 */
export async function askServedStores(token: string | undefined, page: string = location.href): Promise<Response | null> {
  let response: Response;
  try {
    response = await fetch(new URL("api/stores", page), { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: "no-store" });
  } catch {
    return null;
  }
  return (response.headers.get("content-type") ?? "").startsWith("application/json") ? response : null;
}

/** The first range the viewer reads of a session (data/load-session.ts reads 1 MiB at a time). */
const PREFETCH_BYTES = 1 << 20;

/** The first bytes of a session, and its size, asked for before the app ran. */
export interface SessionPrefetch {
  store: string;
  path: string;
  /** Null when the request failed (the port then reads as usual and reports why). */
  answer: Promise<{ bytes: Uint8Array; whole: boolean; mtimeMs: number; at: number } | null>;
  /** The file's size and time (a HEAD request), for a file longer than the bytes; null when it failed. */
  stat: Promise<{ size: number; mtimeMs: number } | null>;
}

/**
 * Asks for the first PREFETCH_BYTES of the session the address names (app/links.ts's
 * `#store=&session=`), and for its size, when there is one and a token (a static host has none).
 */
export function prefetchAddressedSession(token: string | undefined, page: string = location.href): SessionPrefetch | null {
  const link = new URLSearchParams(new URL(page).hash.replace(/^#/, ""));
  const store = link.get("store");
  const path = link.get("session");
  if (token === undefined || store === null || path === null || link.has("insights")) return null;
  const url = new URL(`/api/stores/${encodeURIComponent(store)}/files/${path.split("/").map(encodeURIComponent).join("/")}`, page);
  const authorization = `Bearer ${token}`;
  const modified = (response: Response) => {
    const time = Date.parse(response.headers.get("Last-Modified") ?? "");
    return Number.isNaN(time) ? Date.now() : time;
  };
  const answer = fetch(url, { headers: { Authorization: authorization, Range: `bytes=0-${PREFETCH_BYTES - 1}` }, cache: "no-store" })
    .then(async (response) => {
      if (response.status !== 206 && response.status !== 200) return null;
      const bytes = new Uint8Array(await response.arrayBuffer());
      // Shorter than asked for, or a 200: the whole file.
      return { bytes, whole: response.status === 200 || bytes.length < PREFETCH_BYTES, mtimeMs: modified(response), at: Date.now() };
    })
    .catch(() => null);
  const stat = fetch(url, { method: "HEAD", headers: { Authorization: authorization }, cache: "no-store" })
    .then((response) => {
      const size = Number(response.headers.get("Content-Length") ?? NaN);
      return response.status === 200 && Number.isSafeInteger(size) ? { size, mtimeMs: modified(response) } : null;
    })
    .catch(() => null);
  return { store, path, answer, stat };
}
