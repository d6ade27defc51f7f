/**
 * The viewer's page: served by `sessionkit serve` (its stores answer at api/stores) it reads the
 * user's agent stores through the server (serve-mode.ts); anywhere else (a static host, `vite
 * preview`) it keeps sessions in the browser (static-mode.ts). One app, two sources.
 *
 * Only strict-csp.ts is imported statically: the bundle runs a chunk's imports before the chunk's
 * own code, and the core builds zod schemas as its modules load, which must come after zod is
 * made jitless (or zod probes for eval, a CSP violation).
 */
import "./strict-csp.js";
import "./styles.css";

const { servedStores } = await import("./data/serve-source.js");
const served = await servedStores();
if (served) (await import("./serve-mode.js")).startServeMode(served);
else (await import("./static-mode.js")).startStaticMode();
