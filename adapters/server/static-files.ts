/**
 * The viewer's built files, each with its content type and the security headers; its pages with
 * their Content Security Policy. Its pages are never cached; what is under assets/ (named by a
 * hash of its content: Vite's build) is cached for good, by the browser (a page loaded again
 * compiles its scripts from its code cache instead of fetching and compiling them anew) and by
 * the server (in memory).
 */
import { readFile, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import nodePath from "node:path";
import { HttpError, decodeSegment, securityHeaders } from "./http.js";

/** Where the viewer's built files are, and the policy its pages get as a header. */
export interface ViewerFiles {
  /** An absolute directory. */
  dir: string;
  /** The `Content-Security-Policy` header of its .html files. */
  contentSecurityPolicy: string;
}

/** A file whose name changes with its content: a year, never revalidated. */
const IMMUTABLE = "public, max-age=31536000, immutable";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".wasm": "application/wasm",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * Answers GET and HEAD of the viewer's files. What is under assets/ is read once and kept (the
 * build is a few MB): a page's first files are then sent in the turn their requests arrive, with
 * no file-system calls, which on a busy machine each waited for the thread pool to be scheduled.
 */
export function viewerFileSender(viewer: ViewerFiles | null): (response: ServerResponse, urlPath: string) => Promise<void> {
  const kept = new Map<string, Buffer>();
  return async (response, urlPath) => {
    if (viewer === null) throw new HttpError(404, "this server serves no viewer");
    const relative = urlPath === "/" ? "index.html" : decodeSegment(urlPath.slice(1));
    const file = nodePath.resolve(viewer.dir, relative);
    if (!file.startsWith(viewer.dir + nodePath.sep)) throw new HttpError(400, `${JSON.stringify(urlPath)} is outside the viewer`);
    const extension = nodePath.extname(file);
    // The page's policy as a header too: it adds frame-ancestors, which a meta tag cannot set.
    const policy = extension === ".html" ? { "Content-Security-Policy": viewer.contentSecurityPolicy } : {};
    // The resolved path decides: "assets/../index.html" is the page.
    const immutable = file.startsWith(nodePath.join(viewer.dir, "assets") + nodePath.sep);
    const body = kept.get(file) ?? (await readViewerFile(file, urlPath));
    if (immutable) kept.set(file, body);
    response.writeHead(200, { "Content-Type": CONTENT_TYPES[extension] ?? "application/octet-stream", ...securityHeaders, ...(immutable ? { "Cache-Control": IMMUTABLE } : {}), ...policy });
    response.end(body);
  };
}

async function readViewerFile(file: string, urlPath: string): Promise<Buffer> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) {
    // The client learns no directory of the server's.
    if (urlPath === "/") throw new HttpError(404, "the viewer is not built (no index.html): run npx vite build web-demo");
    throw new HttpError(404, `no file ${urlPath}`);
  }
  return readFile(file);
}
