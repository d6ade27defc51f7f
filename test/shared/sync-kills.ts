/**
 * `sessionkit sync` killed with SIGKILL at random points, many times over, while the machine's
 * agents keep writing (test/shared/sync-machine.ts): after every kill each copied file must be a
 * prefix of some version of its source, and a sync run to its end must leave a copy byte-equal to
 * the source. Half the kills come after a random delay (anywhere in the process's life, its start
 * included); the other half on the k-th change the shared store reports (k random), so that they
 * land in the middle of the copying.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import type { StoragePort } from "../../src/port.js";
import { MACHINE_STORES, type MachineStoreName, type SimulatedMachine } from "./sync-machine.js";
import type { Rng } from "./prng.js";

/** The shared store a sync copies into, as the test sees it. */
interface KillTarget {
  /** The CLI's arguments naming it (`--to …`). */
  args: string[];
  /** The copy of one of the machine's stores in it. */
  copyOf(store: MachineStoreName): StoragePort;
  /** Calls `onChange` for every change the shared store reports until the returned function is called. */
  watchChanges(onChange: () => void): Promise<() => Promise<void>>;
}

export interface KillOptions {
  bundle: string;
  machine: SimulatedMachine;
  /** The machine's name (`--as`). */
  name: string;
  cacheDir: string;
  target: KillTarget;
  kills: number;
  rng: Rng;
  /** Bytes per entry the agents write between runs. */
  entryBytes: number;
}

export interface KillReport {
  kills: number;
  /** Kills after which the copy lacked some of what the source held when the run started: the kill landed before the sync was done. */
  killsMidCopy: number;
  /** Runs that ended before their kill came. */
  completedRuns: number;
  /** The syncs run to their end to check the copy (every fifth round, and the last). */
  checkedRuns: number;
}

/** The kills, then one sync run to its end; throws at the first copy that breaks the rules. */
export async function killDuringSync(options: KillOptions): Promise<KillReport> {
  const { machine, rng, target, kills } = options;
  const report: KillReport = { kills: 0, killsMidCopy: 0, completedRuns: 0, checkedRuns: 0 };
  let cleanRunMs = 1000;
  const stores = Object.keys(MACHINE_STORES) as MachineStoreName[];
  const checkExact = async () => {
    await machine.finishTorn();
    const started = performance.now();
    const { code, stderr } = await runSync(options, null);
    if (code !== 0) throw new Error(`sync exited ${code}: ${stderr}`);
    cleanRunMs = performance.now() - started;
    for (const store of stores) await machine.check(store, target.copyOf(store), true);
    report.checkedRuns++;
  };
  for (let round = 0; report.kills < kills && round < kills * 3; round++) {
    if (round > 0) await machine.work(options.entryBytes);
    const plan: KillPlan = round % 2 === 0 ? { on: "change", count: 1 + rng.int(round === 0 ? 300 : 12) } : { on: "delay", ms: rng.int(Math.ceil(cleanRunMs)) };
    const before = machine.contents();
    const { signal } = await runSync(options, plan);
    if (signal === "SIGKILL") report.kills++;
    else report.completedRuns++;
    let behind = 0;
    for (const store of stores) behind += await machine.check(store, target.copyOf(store), false, before);
    if (signal === "SIGKILL" && behind > 0) report.killsMidCopy++;
    if (round % 5 === 4) await checkExact();
  }
  await checkExact();
  return report;
}

type KillPlan = { on: "delay"; ms: number } | { on: "change"; count: number };

/** One `sessionkit sync` process, killed as planned (null: not at all); an agent writes to a session meanwhile. */
async function runSync(options: KillOptions, plan: KillPlan | null): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const { machine, target } = options;
  let stopWatching = async () => {};
  const child = spawn(process.execPath, [options.bundle, "sync", ...target.args, "--as", options.name], {
    env: { ...process.env, HOME: machine.home, XDG_CACHE_HOME: options.cacheDir, PI_CODING_AGENT_DIR: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const kill = () => child.kill("SIGKILL");
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (plan?.on === "delay") timer = setTimeout(kill, plan.ms);
  if (plan?.on === "change") {
    let seen = 0;
    stopWatching = await target.watchChanges(() => {
      if (++seen === plan.count) kill();
    });
  }
  // An agent goes on writing while the sync reads its folder.
  if (plan !== null) {
    const store = options.rng.pick(Object.keys(MACHINE_STORES) as MachineStoreName[]);
    const session = options.rng.pick(machine.sessions(store));
    await machine.append(store, session, 1, options.entryBytes);
    await machine.tear(store, session);
  }
  const [code, signal] = await exited;
  clearTimeout(timer);
  await stopWatching();
  return { code, signal, stderr };
}
