/** `sessionkit serve`: the viewer and the storage rpc over HTTP until Ctrl+C. */
import { existsSync, readFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import { discoverAgentStores } from "../agent-stores.js";
import type { ServeArgs } from "../commands/serve.js";
import type { Run } from "../run.js";
import { CliError } from "../errors.js";
import { requireDirectory, resolveRoot } from "../store.js";
import { storeCacheDir } from "../store-cache.js";
import { isLoopback } from "../../adapters/server/auth.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { subtreeStorage } from "../../adapters/subtree.js";
import type { StoragePort } from "../../src/port.js";
import { SESSIONS_DIR } from "../../src/session/paths.js";
import { machineStoresIn } from "../machine-stores.js";
import { startServe, type RunningServer, type StoreConfig } from "./server.js";
import { untilInterrupted } from "../interrupt.js";

export async function serveCommand(run: Run<ServeArgs>): Promise<number> {
  const { args, io } = run;
  // The stores the CLI reads without --root (--store's database, or every agent's store found,
  // only --agent's when given) or with --agent-stores besides each --root, and each --root.
  const stores: StoreConfig[] = [];
  const served = new Set<string>();
  const add = async ({ root, label, agent }: StoreConfig) => {
    const real = await realpath(root).catch(() => root);
    if (served.has(real)) return; // a --root that is also an agent's store: once, as the agent's
    served.add(real);
    stores.push({ root, label, agent, cacheDir: storeCacheDir(root, io.env, run.home) });
  };
  if (args.roots.length === 0) {
    for (const store of await run.stores()) {
      if (store.database) {
        // A shared store that `sessionkit sync` fills: each machine's agent stores as stores of their own.
        const storage = await store.database.open();
        const machines = await machineStoresIn(storage);
        if (machines.length === 0 || (await holdsSessions(storage))) stores.push({ storage, root: store.root, label: store.label });
        for (const { dir, label, agent } of machines) stores.push({ storage: subtreeStorage(storage, dir), root: `${store.root} ${dir}`, label, ...(agent ? { agent } : {}) });
      } else await add(store);
    }
    if (stores.length === 0) throw new CliError("not-found", "no agent store found on this machine (looked for pi, omp, xcsh, indusagi, operator): pass --root DIR");
  } else if (args.agentStores) {
    for (const store of await discoverAgentStores({ home: run.home, env: io.env })) if (args.agent === undefined || store.agent === args.agent) await add(store);
  }
  for (const root of args.roots.map((dir) => resolveRoot(dir, io.cwd, io.env))) {
    await requireDirectory(root);
    const storage = nodeFsStorage({ root });
    const machines = await machineStoresIn(storage);
    if (machines.length === 0 || (await holdsSessions(storage))) await add({ root });
    await storage.close();
    for (const { dir, label, agent } of machines) await add({ root: nodePath.join(root, ...dir.split("/")), label, ...(agent ? { agent } : {}) });
  }
  const host = args.host ?? "127.0.0.1";
  const port = args.port ?? 4174;
  let server: RunningServer;
  try {
    server = await startServe({
      stores,
      host,
      port,
      write: args.write,
      viewerDir: viewerDirectory(),
      allowOrigins: args.allowOrigins,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new CliError("failed", `port ${port} on ${host} is in use (another sessionkit serve?): choose another with --port`);
    if (code === "EADDRNOTAVAIL") throw new CliError("failed", `${host} is not an address of this machine (--host)`);
    throw error;
  }
  // Ctrl+C from the moment the URL is out stops the server cleanly.
  const stopped = untilInterrupted();
  if (!isLoopback(host)) io.stderr.write(`sessionkit serve: warning: listening on ${host}, not only this machine: anyone who can reach it and has the URL can read${args.write ? " and change" : ""} these sessions\n`);
  for (const store of server.stores) io.stderr.write(`sessionkit serve: store ${store.id}: ${store.root}${store.readOnly ? " (read-only)" : " (writable)"}\n`);
  io.stdout(`sessionkit serve: ${server.url}\n`);
  await stopped;
  await server.close();
  io.stderr.write("sessionkit serve: stopped\n");
  return 0;
}

/** True when the store has a `sessions/` folder of its own. */
async function holdsSessions(storage: StoragePort): Promise<boolean> {
  return (await storage.list("")).some((entry) => entry.kind === "dir" && entry.name === SESSIONS_DIR);
}

/** web-demo/dist of this package (beside dist/ when built, beside cli/ when run from source). */
function viewerDirectory(): string | null {
  for (let dir = nodePath.dirname(fileURLToPath(import.meta.url)); dir !== nodePath.dirname(dir); dir = nodePath.dirname(dir)) {
    const manifest = nodePath.join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "sessionkit") return nodePath.join(dir, "web-demo", "dist");
  }
  return null;
}
