/**
 * The viewer's page: served by `sessionkit serve` (its stores answer at api/stores) it reads the
 * user's agent stores through the server (serve-mode.ts); anywhere else (a static host, `vite
 * preview`) it keeps sessions in the browser (static-mode.ts). One app, two sources.
 * Each mode's modules are imported when it starts, so a page loads only its own mode's code; the
 * serve mode's (the app's, most of it shared with the static mode) loads while the server is
 * asked, and the session the address names with it: the page's boot script asked as the HTML was
 * parsed (data/serve-boot.ts).
 */
import type { BootRequests } from "./data/serve-boot.js";
import "./styles.css";

const { token, answer, prefetch } = takeBootRequests() ?? (await import("./data/serve-boot.js")).startBootRequests();
const serveMode = import("./serve-mode.js");
serveMode.catch(() => {}); // awaited below when served
const response = await answer;
if (!response || !(await serveMode).startServeMode(response, token, prefetch)) (await import("./static-mode.js")).startStaticMode();

/**
 * The requests the page's boot script started (data/serve-boot.ts), taken once; null when it did
 * not run (a policy without its hash: the page then asks once the serve mode's chunk, which holds
 * that code, has loaded). Only what it made: not, say, an element of that id, which the global
 * object names.
 */
function takeBootRequests(): BootRequests | null {
  const started = globalThis.sessionkitBoot;
  delete globalThis.sessionkitBoot;
  return started !== null && typeof started === "object" && (started as BootRequests).answer instanceof Promise ? (started as BootRequests) : null;
}
