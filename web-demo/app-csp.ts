/**
 * The served app's Content Security Policy: its own files only, and inline scripts and styles
 * only by their hash (the page's boot script, src/boot.ts, its entry and its stylesheet); images
 * also from data: and blob: URLs (session images); WebAssembly may be compiled (SQLite's search index, hash-wasm's hashes) but no
 * JavaScript may be evaluated from strings. The build puts it in index.html's meta tag
 * (vite.config.ts); `sessionkit serve` and `vite preview` also send it as a header, with what only
 * a header can say, the hashes taken from the page they serve.
 */
import { createHash } from "node:crypto";

/** The policy, `scriptHashes` and `styleHashes` ('sha256-…' sources) the inline scripts and styles it allows. */
function appCsp(scriptHashes: readonly string[], styleHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    ["script-src 'self' 'wasm-unsafe-eval'", ...scriptHashes].join(" "),
    ["style-src 'self'", ...styleHashes].join(" "),
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The header for `page` (the built index.html): the policy with its inline scripts' and styles' hashes, and no framing by any page (a meta tag cannot set frame-ancestors). */
export function appCspHeader(page: string): string {
  return `${appPageCsp(page)}; frame-ancestors 'none'`;
}

/** The policy for `page`, allowing its inline scripts and styles. */
export function appPageCsp(page: string): string {
  return appCsp(inlineScriptHashes(page), inlineStyleHashes(page));
}

/** The 'sha256-…' source of a script's or a style's text. */
export function cspHash(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The hash sources of the inline scripts (no src) in `html`, in order. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => cspHash(match[1]!));
}

/** The hash sources of the inline stylesheets (<style> elements) in `html`, in order. */
function inlineStyleHashes(html: string): string[] {
  return [...html.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/gi)].map((match) => cspHash(match[1]!));
}
