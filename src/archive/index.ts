/**
 * `sessionkit/archives`: sessions and their blobs as a zip another machine, browser or person can
 * import (with zip.js and hash-wasm ~92 KB gzipped in a browser bundle). A subpath of its own rather
 * than a part of `sessionkit`: esbuild's code splitting puts every file the root module imports in
 * the chunk an app loads first, so an app that loads archives lazily would load them up front.
 * Their errors, option and summary types and `DEFAULT_LIMITS` stay in `sessionkit` (no zip code).
 *
 * @module sessionkit/archives
 */
export { exportArchive } from "./export.js";
export { importArchive, importSessionFiles } from "./import.js";
export { verifyArchive } from "./verify.js";
