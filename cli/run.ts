/** What every command is given (Run) and the lookups they share; commands.ts makes it. */
import type { AgentStore } from "./agent-stores.js";
import type { GlobalArgs } from "./command.js";
import type { ProgressSink } from "./progress.js";

export interface Io {
  stdout(text: string): void;
  stderr: ProgressSink;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A command's run: the global flags and its own (`A`, its module's parsed type), and the lookups they share. */
export interface Run<A = object> {
  args: GlobalArgs & A;
  io: Io;
  /** Where `import` writes: --root, else pi's store ($PI_CODING_AGENT_DIR or ~/.pi/agent). */
  root: string;
  /** The home directory (stores and the cache are found from it). */
  home: string;
  /** The stores read: the one under --root, else every agent's store found (only --agent's, when given). */
  stores(): Promise<AgentStore[]>;
  /** Prints a library warning (skipped lines, missing blobs) on stderr. */
  warn(message: string): void;
  /** Prints lines, or with --json what the API returned. */
  print(json: unknown, lines: () => string[]): void;
}

/** What runs a command. */
export type CommandRun<A> = (run: Run<A>) => Promise<number>;

export async function lookupContext(run: Run) {
  return { stores: await run.stores(), cwd: run.io.cwd, env: run.io.env, home: run.home, progressSink: run.io.stderr, label: `sessionkit: ${run.args.command}` };
}
