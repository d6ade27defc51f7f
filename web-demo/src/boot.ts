/**
 * The page's inline boot script (built on its own and put in index.html by vite.config.ts, allowed
 * by its hash): asks the server for its stores and the addressed session's first bytes as the HTML
 * is parsed, before the app's module files have arrived; main.ts takes the requests
 * (data/serve-boot.ts).
 */
import { BOOT_KEY, startBootRequests } from "./data/serve-boot.js";

(globalThis as Record<string, unknown>)[BOOT_KEY] = startBootRequests();
