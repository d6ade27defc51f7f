/** `sessionkit serve`: the viewer and the storage rpc over HTTP until Ctrl+C. */
import { existsSync, readFileSync } from "node:fs";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import type { Run } from "../commands.js";
import { CliError } from "../errors.js";
import { requireDirectory } from "../store.js";
import { isLoopback, startServe, type RunningServer } from "./server.js";

export async function serveCommand(run: Run): Promise<number> {
  const { args, io } = run;
  const roots = args.roots.length > 0 ? args.roots.map((root) => nodePath.resolve(io.cwd, root)) : [run.root];
  for (const root of roots) await requireDirectory(root);
  const host = args.host ?? "127.0.0.1";
  const port = args.port ?? 4174;
  let server: RunningServer;
  try {
    server = await startServe({
      stores: roots.map((root) => ({ root })),
      host,
      port,
      write: args.write,
      viewerDir: viewerDirectory(),
      allowOrigins: args.allowOrigins,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new CliError(`port ${port} on ${host} is in use (another sessionkit serve?): choose another with --port`);
    if (code === "EADDRNOTAVAIL") throw new CliError(`${host} is not an address of this machine (--host)`);
    throw error;
  }
  if (!isLoopback(host)) io.stderr.write(`sessionkit serve: warning: listening on ${host}, not only this machine: anyone who can reach it and has the URL can read${args.write ? " and change" : ""} these sessions\n`);
  io.stdout(`sessionkit serve: ${server.url}\n`);
  for (const store of server.stores) io.stderr.write(`sessionkit serve: store ${store.id}: ${store.root}${store.readOnly ? " (read-only)" : " (writable)"}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await server.close();
  io.stderr.write("sessionkit serve: stopped\n");
  return 0;
}

/** web-demo/dist of this package (beside dist/ when built, beside cli/ when run from source). */
function viewerDirectory(): string | null {
  for (let dir = nodePath.dirname(fileURLToPath(import.meta.url)); dir !== nodePath.dirname(dir); dir = nodePath.dirname(dir)) {
    const manifest = nodePath.join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "sessionkit") return nodePath.join(dir, "web-demo", "dist");
  }
  return null;
}
