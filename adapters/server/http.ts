/** What every part of the HTTP server answers with: its errors, statuses and security headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StorageError, type StorageErrorCode } from "../../src/port.js";

/** A request refused with an HTTP status; the message goes to the client as `{"error": …}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The HTTP status of each storage error. */
export const STATUS_OF: Record<StorageErrorCode, number> = {
  "not-found": 404,
  quota: 507,
  locked: 409,
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

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...securityHeaders });
  response.end(JSON.stringify(value));
}

/** Answers a failed request with its status and `{"error": message}` (or cuts a response already under way). */
export function fail(response: ServerResponse, error: unknown): void {
  const status = error instanceof HttpError ? error.status : error instanceof StorageError ? STATUS_OF[error.code] : 500;
  const message = error instanceof Error ? error.message : String(error);
  if (response.headersSent) return void response.destroy();
  response.setHeader("Connection", "close");
  sendJson(response, status, { error: message });
}
