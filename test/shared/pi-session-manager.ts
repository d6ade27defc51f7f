/**
 * pi's own SessionManager: the module `@mariozechner/pi-coding-agent` re-exports from its index
 * (dist/index.js: `export { SessionManager, … } from "./core/session-manager.js"`), imported by
 * path because the package index also loads the whole agent, which costs seconds in every
 * benchmark child process and adds nothing to what is measured.
 */
export { SessionManager as PiSessionManager } from "../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";
