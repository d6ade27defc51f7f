/**
 * Who may use the server: every request carries a `Host` (and `Origin`, when sent) naming this
 * server, so a page of another site, or a DNS name rebound to 127.0.0.1, gets nothing; and every
 * request under /api/ carries the access token, as `Authorization: Bearer`, as a WebSocket
 * subprotocol (browsers set no headers on a WebSocket), or as `?token=` (scripts). The viewer's
 * files hold no data and need no token: the page takes the token from the printed URL and keeps
 * it in sessionStorage. No cookie: cookies ignore ports, so one would reach every service on the
 * machine's address.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
import { TOKEN_SUBPROTOCOL_PREFIX } from "../rpc/websocket.js";
import { HttpError } from "./http.js";

/** The checks of one server, listening on `host`:`port` with `token`. */
export interface Admission {
  /** Host, Origin, token: throws HttpError (403, 401) unless the request may go on. */
  admit(request: IncomingMessage, url: URL): void;
  /** Lets a page of an admitted other origin read the answer. */
  allowOrigin(request: IncomingMessage, response: ServerResponse): void;
}

/** `allowOrigins`: other origins admitted, as {@link checkedOrigin} gives them. */
export function admission(options: { host: string; port: number; origin: string; token: string; allowOrigins: readonly string[] }): Admission {
  const { origin, token } = options;
  const allowedHosts = hostNames(options.host, options.port);
  const allowedOrigins = new Set([...[...allowedHosts].map((name) => `http://${name}`), ...options.allowOrigins]);
  return {
    admit(request, url) {
      if (!allowedHosts.has((request.headers.host ?? "").toLowerCase())) throw new HttpError(403, `the Host header ${JSON.stringify(request.headers.host ?? "")} does not name this server`);
      const from = request.headers.origin;
      if (from !== undefined && !allowedOrigins.has(from)) throw new HttpError(403, `pages of origin ${JSON.stringify(from)} may not use this server (sessionkit serve --allow-origin allows them)`);
      // A CORS preflight carries no credentials; its answer names only the methods and headers allowed.
      if (request.method === "OPTIONS") return;
      if (!url.pathname.startsWith("/api/")) return;
      const given = url.searchParams.get("token") ?? bearer(request) ?? subprotocolToken(request);
      if (given === undefined || given === null) throw new HttpError(401, "no access token (open the URL sessionkit serve printed)");
      if (!sameSecret(given, token)) throw new HttpError(401, "wrong access token");
    },
    allowOrigin(request, response) {
      const from = request.headers.origin;
      if (from !== undefined && from !== origin) response.setHeader("Access-Control-Allow-Origin", from);
    },
  };
}

/** The answer to a CORS preflight of an admitted origin. */
export function preflight(response: ServerResponse): void {
  response.writeHead(204, {
    "Access-Control-Allow-Methods": "GET, POST",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Range",
    "Access-Control-Max-Age": "600",
  });
  response.end();
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The origin of a URL whose pages may use the server, as browsers send it.
 *
 * @throws Error for an opaque origin (file:, data:, …): it serializes as "null", which every
 * sandboxed frame and data: page sends too
 */
export function checkedOrigin(url: string): string {
  const { origin } = new URL(url);
  if (origin === "null") throw new Error(`${url} has no origin of its own (browsers send "null" for it, as for every sandboxed frame and data: page): allow an http: or https: origin`);
  return origin;
}

/** The Host values that name this server: the address it listens on (every local one for 0.0.0.0 / ::), and localhost on loopback. */
function hostNames(host: string, port: number): Set<string> {
  const names = new Set<string>();
  const add = (address: string) => names.add(`${address.includes(":") ? `[${address}]` : address}:${port}`.toLowerCase());
  add(host);
  const all = host === "0.0.0.0" || host === "::";
  if (all) for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) add(info.address);
  if (all || isLoopback(host)) {
    add("localhost");
    add("127.0.0.1");
  }
  return names;
}

function bearer(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
}

/** The token a WebSocket offered as the subprotocol `sessionkit-token.<hex>` (../rpc/websocket.ts). */
function subprotocolToken(request: IncomingMessage): string | undefined {
  for (const offered of (request.headers["sec-websocket-protocol"] ?? "").split(",")) {
    const name = offered.trim();
    if (!name.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) continue;
    const hex = name.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
    // Not hex: no token (Buffer.from would drop what follows the first bad pair).
    return /^(?:[0-9a-f]{2})*$/.test(hex) ? Buffer.from(hex, "hex").toString("utf8") : undefined;
  }
  return undefined;
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
