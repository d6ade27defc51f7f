/**
 * Long-running `sessionkit` processes for the sync tests: `serve` (its URL, token and store list)
 * and `sync --watch` (started once it watches), each stopped with Ctrl+C (SIGINT).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

interface ServedStoreInfo {
  id: string;
  label: string;
  agent?: string;
  readOnly: boolean;
}

export interface LongRunning {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGINT, then the exit code once it is gone. */
  stop(): Promise<number | null>;
}

/** Starts the CLI with `args` and resolves once `ready` matches what it printed (stdout and stderr together). */
export async function startCli(bundle: string, args: readonly string[], env: Record<string, string>, ready: RegExp): Promise<LongRunning> {
  const child = spawn(process.execPath, [bundle, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PI_CODING_AGENT_DIR: "", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit");
  while (!ready.test(stdout + stderr)) {
    await Promise.race([
      once(child.stdout!, "data"),
      once(child.stderr!, "data"),
      exited.then(() => {
        throw new Error(`sessionkit ${args.join(" ")} exited ${child.exitCode}: ${stderr}`);
      }),
    ]);
  }
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGINT");
        await exited;
      }
      return child.exitCode;
    },
  };
}

export interface Served extends LongRunning {
  url: URL;
  token: string;
  /** GET /api/stores. */
  stores(): Promise<ServedStoreInfo[]>;
  /** GET /api/stores/<id>/files/<path>: the file's text, or null (404). */
  file(store: string, path: string): Promise<string | null>;
}

/** `sessionkit <args> serve --port 0`, once it listens. */
export async function startServe(bundle: string, args: readonly string[], env: Record<string, string>): Promise<Served> {
  const running = await startCli(bundle, [...args, "serve", "--port", "0"], env, /sessionkit serve: http\S+\n/);
  const url = new URL(/sessionkit serve: (http\S+)\n/.exec(running.stdout())![1]!);
  const token = url.searchParams.get("token")!;
  const headers = { Authorization: `Bearer ${token}` };
  return {
    ...running,
    url,
    token,
    stores: async () => (await (await fetch(new URL("/api/stores", url), { headers })).json()) as ServedStoreInfo[],
    async file(store, path) {
      const response = await fetch(new URL(`/api/stores/${encodeURIComponent(store)}/files/${path.split("/").map(encodeURIComponent).join("/")}`, url), { headers });
      if (response.status === 404) return null;
      if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
      return response.text();
    },
  };
}
