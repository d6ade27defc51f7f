/**
 * Who may use the server: every request carries the access token (query `token`,
 * `Authorization: Bearer`, or the cookie a page load with the token sets) and a `Host` (and
 * `Origin`, when sent) naming this server, so a page of another site, or a DNS name rebound to
 * 127.0.0.1, gets nothing.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
import { HttpError } from "./http.js";

/** The checks of one server, listening on `host`:`port` with `token`. */
export interface Admission {
  /** Host, Origin, token: throws HttpError (403, 401) unless the request may go on. */
  admit(request: IncomingMessage, url: URL): void;
  /** Lets a page of an admitted other origin read the answer. */
  allowOrigin(request: IncomingMessage, response: ServerResponse): void;
  /** Sets the cookie that admits the page's later requests, when the URL carries the token. */
  setCookie(response: ServerResponse, url: URL): void;
}

/** `allowOrigins`: other origins admitted, as {@link checkedOrigin} gives them. */
export function admission(options: { host: string; port: number; origin: string; token: string; allowOrigins: readonly string[] }): Admission {
  const { origin, token } = options;
  const cookieName = `sessionkit-${options.port}`;
  const allowedHosts = hostNames(options.host, options.port);
  const allowedOrigins = new Set([...[...allowedHosts].map((name) => `http://${name}`), ...options.allowOrigins]);
  return {
    admit(request, url) {
      if (!allowedHosts.has((request.headers.host ?? "").toLowerCase())) throw new HttpError(403, `the Host header ${JSON.stringify(request.headers.host ?? "")} does not name this server`);
      const from = request.headers.origin;
      if (from !== undefined && !allowedOrigins.has(from)) throw new HttpError(403, `pages of origin ${JSON.stringify(from)} may not use this server (sessionkit serve --allow-origin allows them)`);
      const given = url.searchParams.get("token") ?? bearer(request) ?? cookie(request, cookieName);
      if (given === undefined || given === null) throw new HttpError(401, "no access token (open the URL sessionkit serve printed)");
      if (!sameSecret(given, token)) throw new HttpError(401, "wrong access token");
    },
    allowOrigin(request, response) {
      const from = request.headers.origin;
      if (from !== undefined && from !== origin) response.setHeader("Access-Control-Allow-Origin", from);
    },
    setCookie(response, url) {
      if (url.searchParams.has("token")) response.setHeader("Set-Cookie", `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`);
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

function cookie(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
