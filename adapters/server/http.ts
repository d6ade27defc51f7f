/** What every part of the HTTP server answers with: its errors, statuses and security headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StorageError, type StorageErrorCode } from "../../src/port.js";

/** A request refused with an HTTP status (and headers); the message goes to the client as `{"error": …}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** The HTTP status of each storage error. */
export const STATUS_OF: Record<StorageErrorCode, number> = {
  "not-found": 404,
  quota: 507,
  locked: 409,
  collision: 409,
  corrupt: 500,
  io: 500,
  unsupported: 501,
  invalid: 400,
  "read-only": 403,
  forbidden: 403,
  limit: 429,
};

/** Sent with every answer: nothing is sniffed, framed, cached or told where it came from. */
export const securityHeaders = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
};

export function allowMethods(request: IncomingMessage, methods: string[]): void {
  if (!methods.includes(request.method ?? "")) throw new HttpError(405, `${request.method} is not allowed here (${methods.join(", ")})`);
}

export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `malformed percent-encoding in ${JSON.stringify(segment)}`);
  }
}

export async function readBody(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers["content-length"] ?? NaN);
  if (declared > limit) throw new HttpError(413, `the body (${declared} bytes) is over the limit of ${limit} bytes`);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of request as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) throw new HttpError(413, `the body is over the limit of ${limit} bytes`);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): void {
  response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...securityHeaders, ...headers });
  response.end(JSON.stringify(value));
}

/** Answers a failed request with its status and `{"error": message}` (or cuts a response already under way). */
export function fail(response: ServerResponse, error: unknown): void {
  const status = error instanceof HttpError ? error.status : error instanceof StorageError ? STATUS_OF[error.code] : 500;
  const message = error instanceof Error ? error.message : String(error);
  if (response.headersSent) return void response.destroy();
  response.setHeader("Connection", "close");
  sendJson(response, status, { error: message }, error instanceof HttpError ? error.headers : {});
}

/**
 * The part of a file of `size` bytes a `Range` header asks for, as [start, end) (RFC 9110 §14):
 * null for the whole file when there is no header, its unit is not bytes, or it asks for several
 * ranges (this server sends no multipart answers; a server may ignore a Range). A suffix longer
 * than the file is the whole file; a suffix of an empty file is ignored (no part of it can be
 * named).
 *
 * @throws HttpError 416, its Content-Range naming the size, for a malformed or inverted range
 * (`bytes=5-3`) and for one that starts at or past the end
 */
export function parseRange(header: string | undefined, size: number): [start: number, end: number] | null {
  const spec = rangeSpec(header);
  if (spec === null) return null;
  const unsatisfiable = (why: string) => unsatisfiableRange(header!, size, why);
  const match = /^\s*(\d*)-(\d*)\s*$/.exec(spec);
  if (!match || (match[1] === "" && match[2] === "")) throw unsatisfiable("is not one range bytes=first-last, bytes=first- or bytes=-suffix");
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) throw unsatisfiable("asks for no bytes");
    return size === 0 ? null : [Math.max(0, size - suffix), size];
  }
  const first = Number(match[1]);
  const last = match[2] === "" ? Infinity : Number(match[2]);
  if (last < first) throw unsatisfiable("ends before it starts");
  if (first >= size) throw unsatisfiable("starts at or past the end");
  return [first, Math.min(size, last + 1)];
}

/**
 * The range `bytes=first-last` as [first, last + 1) when the header names one by both ends, in
 * order and at most `maxLength` bytes long: what can be read without knowing the file's size.
 * Null for every other header (parseRange answers those).
 */
export function boundedRange(header: string | undefined, maxLength: number): [start: number, end: number] | null {
  const match = /^\s*(\d+)-(\d+)\s*$/.exec(rangeSpec(header) ?? "");
  if (!match) return null;
  const [first, last] = [Number(match[1]), Number(match[2])];
  return first <= last && last - first < maxLength ? [first, last + 1] : null;
}

/** The 416 for a Range header no part of a file of `size` bytes satisfies, and why. */
export function unsatisfiableRange(header: string, size: number, why: string): HttpError {
  return new HttpError(416, `the Range ${JSON.stringify(header)} ${why} (the file has ${size} bytes)`, { "Content-Range": `bytes */${size}` });
}

/** What follows "bytes=" in a Range header of one range; null when there is none, its unit is not bytes, or it has several. */
function rangeSpec(header: string | undefined): string | null {
  if (header === undefined) return null;
  const equals = header.indexOf("=");
  if (equals < 0 || header.slice(0, equals).trim().toLowerCase() !== "bytes") return null;
  const spec = header.slice(equals + 1);
  return spec.includes(",") ? null : spec;
}
