/**
 * Every agent's session store on this machine (the five seeds' agents): where it is, whose it is,
 * and how it lays out its sessions. Needs the home directory and the environment, so it lives
 * here, not in the core. The CLI and `sessionkit serve` read all of them unless told one root.
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import nodePath from "node:path";
import type { StoreLayout } from "../src/session/paths.js";
import { ownerLayout, type StoreOwner } from "../src/session/store-owner.js";
import type { AgentName } from "./command.js";
import type { DatabaseStore } from "./database-store.js";

export interface AgentStore {
  agent: AgentName;
  /** The store's root directory, absolute (it holds `sessions/`). */
  root: string;
  /** For people: the agent and the root, `~` for the home directory ("pi ~/.pi/agent"). */
  label: string;
  layout: StoreLayout;
  /** Set for a database store (--store): it is read through its own ports, `root` is its name. */
  database?: DatabaseStore;
}

export interface DiscoveryEnvironment {
  home: string;
  env: NodeJS.ProcessEnv;
}

/** Where each agent keeps its store, below the home directory (seed 003's profiles: see below). */
const AGENT_DIRS: ReadonlyArray<{ agent: Exclude<AgentName, "operator">; dir: string }> = [
  { agent: "pi", dir: ".pi/agent" },
  { agent: "omp", dir: ".omp/agent" },
  { agent: "xcsh", dir: ".xcsh/agent" },
  { agent: "indusagi", dir: ".indusagi/agent" },
];

/** The layout of an agent's store (store-owner.ts says it for every owner). */
function agentLayout(agent: AgentName): StoreLayout {
  return ownerLayout(agent)!;
}

/**
 * Whose store it is, which decides the form of every file written into it (store-owner.ts): a
 * database store (--store) is sessionkit's own, a directory its agent's.
 */
export function storeOwner(store: AgentStore): StoreOwner {
  return store.database ? "sessionkit" : store.agent;
}

/** seed 003's agent keeps one flat store per profile: `~/.operator/profiles/<name>/sessions/`. */
const OPERATOR_PROFILES = ".operator/profiles";

/**
 * The stores that exist: pi's (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`), oh-my-pi's
 * (`~/.omp/agent`), xcsh's (`~/.xcsh/agent`), indusagi's (`~/.indusagi/agent`), and each seed-003
 * profile with a `sessions/` folder. A directory reached twice (a link, or
 * $PI_CODING_AGENT_DIR naming another agent's) is listed once, as the first agent it was found for.
 */
export async function discoverAgentStores({ home, env }: DiscoveryEnvironment): Promise<AgentStore[]> {
  const candidates: Array<Omit<AgentStore, "label">> = AGENT_DIRS.map(({ agent, dir }) => ({
    agent,
    root: agent === "pi" && env.PI_CODING_AGENT_DIR ? nodePath.resolve(expandTilde(env.PI_CODING_AGENT_DIR, home)) : nodePath.join(home, dir),
    layout: agentLayout(agent),
  }));
  for (const profile of await subdirectories(nodePath.join(home, OPERATOR_PROFILES))) {
    const root = nodePath.join(home, OPERATOR_PROFILES, profile);
    if (await isDirectory(nodePath.join(root, "sessions"))) candidates.push({ agent: "operator", root, layout: agentLayout("operator") });
  }
  const seen = new Set<string>();
  const stores: AgentStore[] = [];
  for (const candidate of candidates) {
    if (!(await isDirectory(candidate.root))) continue;
    const real = await realpath(candidate.root);
    if (seen.has(real)) continue;
    seen.add(real);
    stores.push({ ...candidate, label: `${candidate.agent} ${tildePath(candidate.root, home)}` });
  }
  return stores;
}

/**
 * The store at `root` (given with --root): the discovered store there, else `agent`'s layout when
 * given, else a guess from the folder: sessions directly in `sessions/` are seed 003's flat layout;
 * anything else is pi's.
 */
export async function storeAt(root: string, discovered: readonly AgentStore[], home: string, agent?: AgentName): Promise<AgentStore> {
  const real = await realpath(root).catch(() => root);
  const known = await findAsync(discovered, async (store) => (await realpath(store.root).catch(() => store.root)) === real);
  if (known && (agent === undefined || known.agent === agent)) return known;
  const name = agent ?? (await guessAgent(root));
  return { agent: name, root, label: `${name} ${tildePath(root, home)}`, layout: agentLayout(name) };
}

async function guessAgent(root: string): Promise<AgentName> {
  const entries = await readdir(nodePath.join(root, "sessions"), { withFileTypes: true }).catch(() => [] as Dirent[]);
  return entries.some((entry) => entry.isFile() && entry.name.endsWith(".jsonl")) ? "operator" : "pi";
}

async function findAsync<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<T | undefined> {
  for (const item of items) if (await test(item)) return item;
  return undefined;
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

function expandTilde(path: string, home: string): string {
  return path === "~" || path.startsWith("~/") ? nodePath.join(home, path.slice(2)) : path;
}

/** `path` with the home directory as "~". */
function tildePath(path: string, home: string): string {
  const relative = nodePath.relative(home, path);
  return relative !== "" && !relative.startsWith("..") && !nodePath.isAbsolute(relative) ? `~/${relative.split(nodePath.sep).join("/")}` : path;
}

/** Where an agent's stores are looked for, for messages. */
export function agentHomes(agent: AgentName, env: NodeJS.ProcessEnv, home: string): string {
  const dirs: Record<AgentName, string> = {
    pi: env.PI_CODING_AGENT_DIR ? tildePath(nodePath.resolve(env.PI_CODING_AGENT_DIR), home) : "~/.pi/agent",
    omp: "~/.omp/agent",
    xcsh: "~/.xcsh/agent",
    indusagi: "~/.indusagi/agent",
    operator: "~/.operator/profiles/*/sessions",
  };
  return dirs[agent];
}
