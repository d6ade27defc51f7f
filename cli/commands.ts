/** Runs a command: makes what every command is given (Run), finds the stores it reads. */
import os from "node:os";
import { agentHomes, discoverAgentStores, storeAt, type AgentStore } from "./agent-stores.js";
import type { ParsedCommand } from "./command-table.js";
import type { GlobalArgs } from "./command.js";
import { CliError } from "./errors.js";
import { writeJson } from "./json.js";
import { databaseStore, requireDirectory, resolveRoot } from "./store.js";
import { neutralizeControls, neutralizeJsonControls } from "./terminal-text.js";
import { loadTextWidth } from "./text-width.js";
import type { Io, Run } from "./run.js";

/** Runs a parsed command with what every command is given (Run). */
export async function runCommand({ args, run: command }: ParsedCommand, io: Io): Promise<number> {
  const home = os.homedir();
  let stores: Promise<AgentStore[]> | undefined;
  const run: Run = {
    args,
    io,
    root: resolveRoot(args.root, io.cwd, io.env),
    home,
    stores: () => (stores ??= storesToRead(args, io, home)),
    warn: (message) => io.stderr.write(`sessionkit: ${args.command}: ${neutralizeControls(message)}\n`),
    print(json, lines) {
      if (args.json) {
        if (writeJson(json, (chunk) => io.stdout(neutralizeJsonControls(chunk)))) io.stdout("\n");
        return;
      }
      // In batches: the text of a large session is too long for one string.
      let batch = "";
      for (const line of lines()) {
        batch += `${neutralizeControls(line)}\n`;
        if (batch.length >= 1 << 20) {
          io.stdout(batch);
          batch = "";
        }
      }
      io.stdout(batch);
    },
  };
  // Text output measures what it prints (tables, lines cut to a width); --json needs none of that.
  if (!args.json) await loadTextWidth();
  try {
    return await command(run);
  } finally {
    // A database store's pools would keep the process alive.
    if (stores) for (const store of await stores.catch(() => [])) await store.database?.closeAll();
  }
}

/** The stores a command reads (see Run.stores). */
async function storesToRead(args: GlobalArgs, io: Io, home: string): Promise<AgentStore[]> {
  if (args.store !== undefined) return [databaseStore(args.store)];
  const discovered = await discoverAgentStores({ home, env: io.env });
  if (args.root !== undefined) {
    const root = resolveRoot(args.root, io.cwd, io.env);
    await requireDirectory(root);
    return [await storeAt(root, discovered, home, args.agent)];
  }
  if (args.agent === undefined) return discovered;
  const chosen = discovered.filter((store) => store.agent === args.agent);
  if (chosen.length === 0) throw new CliError("not-found", `no store of ${args.agent} found (looked in ${agentHomes(args.agent, io.env, home)})`);
  return chosen;
}
