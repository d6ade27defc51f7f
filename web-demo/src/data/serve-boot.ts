/**
 * What the viewer's page asks of its server before the app's code has loaded, so the answers
 * arrive while it loads: `GET api/stores` (is this `sessionkit serve`, and with which stores) and
 * the first bytes of the session the address names. The page's inline boot script (../boot.ts,
 * allowed by its hash in the page's policy) asks as the HTML is parsed; main.ts takes what it
 * started, or asks itself when it did not run (a host whose policy header lacks its hash). The
 * token comes from the printed URL's `?token=` once and is kept in sessionStorage: that is this
 * origin's (scheme, host and port, so no other local server reads it, as it would a cookie) and
 * this tab's, and it survives a reload. No imports: this is the inline boot script's code.
 */

export const TOKEN_KEY = "sessionkit-serve.token";

/** The token of the printed URL (`?token=`), else the one this tab kept. */
function pageToken(page: string = location.href): string | undefined {
  return new URL(page).searchParams.get("token") ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** A JSON answer to `GET api/stores`: its status and its body, parsed (null when it is not JSON). */
export interface StoresAnswer {
  status: number;
  ok: boolean;
  body: unknown;
}

/**
 * `GET api/stores` of this page's server: its answer when it is JSON (a `sessionkit serve`, its
 * stores or its refusal of the token), else null (a static host answers 404, or its index.html).
 * The body is read here, while the app's files load: read by the app, it waited for a task of its
 * own, and the browser painted an empty frame first.
 */
async function askServedStores(token: string | undefined, page: string = location.href): Promise<StoresAnswer | null> {
  try {
    const response = await fetch(new URL("api/stores", page), { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: "no-store" });
    if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return null;
    return { status: response.status, ok: response.ok, body: await response.json().catch(() => null) };
  } catch {
    return null;
  }
}

/** The first range the viewer reads of a session (data/load-session.ts reads 1 MiB at a time). */
const PREFETCH_BYTES = 1 << 20;

/** The first bytes of a session, and its size, asked for before the app ran. */
export interface SessionPrefetch {
  store: string;
  path: string;
  /** Null when the request failed (the port then reads as usual and reports why). */
  answer: Promise<{ bytes: Uint8Array; whole: boolean; mtimeMs: number; at: number } | null>;
  /**
   * The file's size and time (a HEAD request, asked only once the first answer's headers show
   * the file longer than the bytes asked for); null when it failed or was not needed.
   */
  stat: Promise<{ size: number; mtimeMs: number } | null>;
}

/**
 * Asks for the first PREFETCH_BYTES of the session the address names (app/links.ts's
 * `#store=&session=`), and for its size when it is longer, when there is one and a token (a static
 * host has none).
 */
function prefetchAddressedSession(token: string | undefined, page: string = location.href): SessionPrefetch | null {
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
  const head = () =>
    fetch(url, { method: "HEAD", headers: { Authorization: authorization }, cache: "no-store" })
      .then((response) => {
        const size = Number(response.headers.get("Content-Length") ?? NaN);
        return response.status === 200 && Number.isSafeInteger(size) ? { size, mtimeMs: modified(response) } : null;
      })
      .catch(() => null);
  let stat: SessionPrefetch["stat"] = Promise.resolve(null);
  const answer = fetch(url, { headers: { Authorization: authorization, Range: `bytes=0-${PREFETCH_BYTES - 1}` }, cache: "no-store" })
    .then(async (response) => {
      if (response.status !== 206 && response.status !== 200) return null;
      // A 206 of all the bytes asked for: the file may go on, and its size is asked for beside the body.
      if (response.status === 206 && Number(response.headers.get("Content-Length")) === PREFETCH_BYTES) stat = head();
      const bytes = new Uint8Array(await response.arrayBuffer());
      // Shorter than asked for, or a 200: the whole file.
      return { bytes, whole: response.status === 200 || bytes.length < PREFETCH_BYTES, mtimeMs: modified(response), at: Date.now() };
    })
    .catch(() => null);
  return {
    store,
    path,
    answer,
    // Read once the answer is in (serve-source.ts asks for the size after the bytes).
    get stat() {
      return stat;
    },
  };
}

/** The requests the page starts with: the token it found, the server's stores, the addressed session's first bytes. */
export interface BootRequests {
  token: string | undefined;
  answer: Promise<StoresAnswer | null>;
  prefetch: SessionPrefetch | null;
}

declare global {
  /** What the inline boot script started, for main.ts to take. */
  var sessionkitBoot: unknown;
}

/** The page's requests, started now: by the boot script, or by main.ts when it did not run. */
export function startBootRequests(page: string = location.href): BootRequests {
  const token = pageToken(page);
  return { token, answer: askServedStores(token, page), prefetch: prefetchAddressedSession(token, page) };
}
