/**
 * How a shared store keeps every machine's agent stores apart (`sessionkit sync` writes them,
 * `sessionkit serve` shows each as a store of its own): `machines/<machine>/<store>/`, holding
 * that agent store's `sessions/` and `blobs/` as the agent laid them out. `<store>` is the agent's
 * name ("pi", "omp", …), or `operator-<profile>` for a seed-003 profile.
 */
import nodePath from "node:path";
import { joinPath, type StoragePort } from "../src/port.js";
import { SESSIONS_DIR } from "../src/session/paths.js";
import type { AgentStore } from "./agent-stores.js";
import { AGENTS, type AgentName } from "./command.js";

const MACHINES_DIR = "machines";

/** A machine's name in a shared store (sync --as, or the host name): one safe path segment. */
export function isMachineName(name: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/.test(name);
}

/** The directory of one machine's copy of an agent store in the shared store. */
export function machineStoreDir(machine: string, store: string): string {
  return joinPath(MACHINES_DIR, machine, store);
}

/** The directory of one machine in the shared store (its sync takes a lock here). */
export function machineDir(machine: string): string {
  return joinPath(MACHINES_DIR, machine);
}

/** The name an agent store goes by in the shared store; null when a profile's name is no safe path segment. */
export function sharedStoreName(store: AgentStore): string | null {
  if (store.agent !== "operator") return store.agent;
  const name = `operator-${nodePath.basename(store.root)}`;
  return isMachineName(name) ? name : null;
}

/** One machine's agent store found in a shared store. */
export interface MachineStore {
  machine: string;
  /** Its name there ("pi", "operator-work"). */
  store: string;
  /** The agent it is of, when the name says it. */
  agent: AgentName | undefined;
  /** Its directory in the shared store. */
  dir: string;
  /** For people: "<machine> · <store>". */
  label: string;
}

/** The machines' agent stores in `port` (those with a `sessions/` folder), by machine and store name. */
export async function machineStoresIn(port: StoragePort): Promise<MachineStore[]> {
  const found: MachineStore[] = [];
  for (const machine of await port.list(MACHINES_DIR)) {
    if (machine.kind !== "dir") continue;
    for (const store of await port.list(machineDir(machine.name))) {
      if (store.kind !== "dir") continue;
      const dir = machineStoreDir(machine.name, store.name);
      if (!(await port.list(dir)).some((child) => child.kind === "dir" && child.name === SESSIONS_DIR)) continue;
      const agent = (AGENTS as readonly string[]).find((name) => store.name === name || store.name.startsWith(`${name}-`)) as AgentName | undefined;
      found.push({ machine: machine.name, store: store.name, agent, dir, label: `${machine.name} · ${store.name}` });
    }
  }
  return found;
}
