/**
 * Many writers on one database, as real processes (fixtures/session-writer.ts): each writes its
 * sessions at once through its own connections. Used by the tests and by `npm run bench`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const WRITER = fileURLToPath(new URL("./fixtures/session-writer.ts", import.meta.url));

export interface WriterProcess {
  child: ChildProcess;
  /** Resolves with the first stdout line for which `match` is true; rejects when the child exits first. */
  line(match: (line: string) => boolean): Promise<string>;
}

/** Starts the writer child with `args` (after url and schema), and `env` added to its environment. */
export function startWriter(url: string, schema: string, args: string[], env: Record<string, string> = {}): WriterProcess {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, url, schema, ...args], { cwd: REPO, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  const lines: string[] = [];
  const waiting = new Set<() => void>();
  let stderr = "";
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiting) wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.on("exit", () => {
    for (const wake of waiting) wake();
  });
  return {
    child,
    line: (match) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const found = lines.find(match);
          if (found !== undefined) {
            waiting.delete(check);
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiting.delete(check);
            reject(new Error(`writer ${args.join(" ")} exited (${child.exitCode ?? child.signalCode}) before printing the line it was waited for:\n${stderr.slice(-2000)}`));
          }
        };
        waiting.add(check);
        check();
      }),
  };
}

export interface ManyWritersResult {
  /** Every session file written, per process. */
  paths: string[][];
  entries: number;
  /** From the go to the last process done. */
  ms: number;
  entriesPerSecond: number;
}

export async function runManyWriters(
  url: string,
  schema: string,
  options: { processes: number; sessions: number; entries: number; flushEvery: number },
): Promise<ManyWritersResult> {
  const writers = Array.from({ length: options.processes }, () =>
    startWriter(url, schema, ["sessions", String(options.sessions), String(options.entries), String(options.flushEvery)]),
  );
  try {
    // Loading tsx and the kit takes most of a child's life: start together once all are loaded.
    await Promise.all(writers.map((writer) => writer.line((line) => line === "ready")));
    const started = performance.now();
    for (const writer of writers) writer.child.stdin!.write("go\n");
    const results = await Promise.all(writers.map(async (writer) => JSON.parse(await writer.line((line) => line.startsWith("{"))) as { paths: string[]; entries: number }));
    const ms = performance.now() - started;
    const entries = results.reduce((sum, result) => sum + result.entries, 0);
    return { paths: results.map((result) => result.paths), entries, ms, entriesPerSecond: entries / (ms / 1000) };
  } finally {
    for (const writer of writers) if (writer.child.exitCode === null) writer.child.kill("SIGKILL");
  }
}
