/**
 * The viewer's page: served by `sessionkit serve` (its stores answer at api/stores) it reads the
 * user's agent stores through the server (serve-mode.ts); anywhere else (a static host, `vite
 * preview`) it keeps sessions in the browser (static-mode.ts). One app, two sources.
 * The app's code and the serve mode's are one chunk (vite.config.ts), preloaded by index.html; it
 * loads while the server is asked, and the session the address names with it: the page's boot
 * script asked as the HTML was parsed (data/serve-boot.ts). The static mode's own modules are
 * imported when it starts.
 */
import { startBootRequests, type BootRequests } from "./data/serve-boot.js";
import { startServeMode } from "./serve-mode.js";
import "./styles.css";

const { token, answer, prefetch } = takeBootRequests() ?? startBootRequests();
const response = await answer;
// The app starts in a task of its own. Until this module and the microtasks it runs are done, the
// document has not finished parsing, and Chromium starts rendering a document only once it has:
// a first render in them would be followed, before its frame, by that start (a forced style and
// layout of the whole page, then DOMContentLoaded). The first entry shows 11 ms sooner this way.
await new Promise((resolve) => setTimeout(resolve));
if (!response || !startServeMode(response, token, prefetch)) (await import("./static-mode.js")).startStaticMode();

/**
 * The requests the page's boot script started (data/serve-boot.ts), taken once; null when it did
 * not run (a policy without its hash: the page then asks once its chunk has loaded). Only what it
 * made: not, say, an element of that id, which the global object names.
 */
function takeBootRequests(): BootRequests | null {
  const started = globalThis.sessionkitBoot;
  delete globalThis.sessionkitBoot;
  return started !== null && typeof started === "object" && (started as BootRequests).answer instanceof Promise ? (started as BootRequests) : null;
}
