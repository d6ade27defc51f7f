// The page that says where the assets are served (here /vendor/, away from the bundle).
import { configureSqlite } from "sessionkit";
import { runChecks } from "./checks.js";

configureSqlite({ wasmUrl: "/vendor/sqlite3.wasm" });
await runChecks({ workerUrl: "/vendor/sessionkit-opfs-worker.js" });
