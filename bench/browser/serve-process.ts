/**
 * `sessionkit serve`'s server for the viewer bench (./viewer.ts), in a process of its own as the
 * CLI runs it: cli/serve/server.ts `startServe`, read-only, its caches in a directory of their own
 * (as the CLI mounts the user's cache dir), over one store and a given viewer build (the CLI serves
 * the package's web-demo/dist; the bench measures the build it made). Prints one JSON line,
 * `{"url": …, "store": …}`, once listening; stops on SIGTERM.
 * `tsx bench/browser/serve-process.ts <viewer build dir> <store root> <cache dir>`
 */
import { startServe } from "../../cli/serve/server.js";

const [viewerDir, root, cacheDir] = process.argv.slice(2);
if (!viewerDir || !root || !cacheDir) throw new Error("usage: serve-process.ts <viewer build dir> <store root> <cache dir>");
const server = await startServe({ stores: [{ root, cacheDir }], port: 0, viewerDir });
process.stdout.write(`${JSON.stringify({ url: server.url, store: server.stores[0]!.id })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
