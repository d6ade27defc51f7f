/**
 * The viewer's page: served by `sessionkit serve` (its stores answer at api/stores) it reads the
 * user's agent stores through the server (serve-mode.ts); anywhere else (a static host, `vite
 * preview`) it keeps sessions in the browser (static-mode.ts). One app, two sources.
 * Each mode's modules are imported when it starts, so a page loads only its own mode's code.
 */
import "./styles.css";

const { servedStores } = await import("./data/serve-source.js");
const served = await servedStores();
if (served) (await import("./serve-mode.js")).startServeMode(served);
else (await import("./static-mode.js")).startStaticMode();
