/**
 * The page's inline boot script (built on its own and put in index.html by vite.config.ts, allowed
 * by its hash): asks the server for its stores and the addressed session's first bytes as the HTML
 * is parsed, before the app's module files have arrived; main.ts takes the requests
 * (data/serve-boot.ts).
 */
import { startBootRequests } from "./data/serve-boot.js";

globalThis.sessionkitBoot = startBootRequests();
// The app reads its settings (theme, list) from localStorage as it starts, and a page's first use
// of it waits on the browser process: done while the page waits for the app's files instead.
setTimeout(() => {
  try {
    void localStorage.length;
  } catch {
    // refused: the app finds out itself
  }
}, 0);
