/**
 * The served app's Content Security Policy: its own files only; images also from data: and blob:
 * URLs (session images); WebAssembly may be compiled (SQLite's search index, hash-wasm's hashes)
 * but no JavaScript may be evaluated from strings. The build puts it in index.html's meta tag
 * (vite.config.ts); `sessionkit serve` also sends it as a header, with what only a header can say.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** The header: the policy, and no framing by any page (a meta tag cannot set frame-ancestors). */
export const APP_CSP_HEADER = `${APP_CSP}; frame-ancestors 'none'`;
