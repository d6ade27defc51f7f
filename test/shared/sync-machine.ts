/**
 * A simulated developer machine for the `sessionkit sync` tests: a $HOME with a pi store
 * (~/.pi/agent) and an oh-my-pi store (~/.omp/agent, whose lines reference blobs/), written as
 * agents write them (appends, a title rewritten by rename, a line half written, a session
 * deleted). It remembers every version of every file, so that a copy can be checked at any
 * moment: each copied file must be a prefix of some version of its source (a copy that lags is
 * fine; a byte that was never in the source is not).
 */
import { createHash, randomUUID } from "node:crypto";
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { StoragePort } from "../../src/port.js";
import type { Rng } from "./prng.js";

/** The stores of a machine, by their name in the shared store, with their folder below $HOME. */
export const MACHINE_STORES = { pi: ".pi/agent", omp: ".omp/agent" } as const;
export type MachineStoreName = keyof typeof MACHINE_STORES;

const PROJECTS = ["--work-api--", "--work-web--", "--home-notes--"];

export class SimulatedMachine {
  /** Every version of each session file's complete lines, by "<store>/<storage path>"; the last is the current one. */
  private readonly versions = new Map<string, string[]>();
  /** Files with half a line at their end: the part written and the rest. */
  private readonly torn = new Map<string, { written: string; rest: string }>();
  private readonly blobs = new Map<MachineStoreName, Set<string>>([
    ["pi", new Set()],
    ["omp", new Set()],
  ]);

  constructor(
    /** The fake $HOME. */
    readonly home: string,
    private readonly rng: Rng,
  ) {}

  /** The store's folder. */
  root(store: MachineStoreName): string {
    return join(this.home, MACHINE_STORES[store]);
  }

  /** `count` sessions per store, each with `entries` entries of about `entryBytes`. */
  async populate(count: number, entries: number, entryBytes: number): Promise<void> {
    for (const store of Object.keys(MACHINE_STORES) as MachineStoreName[]) {
      await mkdir(join(this.root(store), "sessions"), { recursive: true });
      // What an agent keeps besides sessions: never to be copied.
      await writeFile(join(this.root(store), "auth.json"), '{"token":"secret"}');
      for (let i = 0; i < count; i++) await this.newSession(store, entries, entryBytes);
    }
  }

  /** A new session of `entries` entries. */
  async newSession(store: MachineStoreName, entries: number, entryBytes: number): Promise<string> {
    const id = randomUUID();
    const path = `sessions/${this.rng.pick(PROJECTS)}/2026-01-0${1 + this.rng.int(9)}T00-00-00-000Z_${id}.jsonl`;
    let text = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work" })}\n`;
    for (let i = 0; i < entries; i++) text += await this.entry(store, entryBytes);
    await mkdir(dirname(join(this.root(store), path)), { recursive: true });
    await writeFile(join(this.root(store), path), text);
    this.versions.set(`${store}/${path}`, [text]);
    return path;
  }

  /** The session files there now (storage paths), of one store. */
  sessions(store: MachineStoreName): string[] {
    return [...this.versions.keys()].filter((key) => key.startsWith(`${store}/`) && this.isCurrent(key)).map((key) => key.slice(store.length + 1));
  }

  private readonly removed = new Set<string>();

  private isCurrent(key: string): boolean {
    return !this.removed.has(key);
  }

  /** One entry line; in oh-my-pi's store one in four references a new blob (written first, as oh-my-pi does). */
  private async entry(store: MachineStoreName, entryBytes: number): Promise<string> {
    let content = words(this.rng, entryBytes);
    if (store === "omp" && this.rng.chance(0.25)) {
      const blob = Buffer.from(words(this.rng, 2000));
      const hash = createHash("sha256").update(blob).digest("hex");
      const path = join(this.root(store), "blobs", hash);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, blob);
      this.blobs.get(store)!.add(hash);
      content = `blob:sha256:${hash}`;
    }
    return `${JSON.stringify({ type: "message", id: randomUUID().slice(0, 8), parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content } })}\n`;
  }

  /** Appends `count` entries to a session, as an agent does (the half line at its end, if any, finished first). */
  async append(store: MachineStoreName, path: string, count: number, entryBytes: number): Promise<string> {
    const key = `${store}/${path}`;
    const torn = this.torn.get(key);
    this.torn.delete(key);
    let added = "";
    for (let i = 0; i < count; i++) added += await this.entry(store, entryBytes);
    await appendFile(join(this.root(store), path), (torn?.rest ?? "") + added);
    const versions = this.versions.get(key)!;
    versions[versions.length - 1] += (torn ? torn.written + torn.rest : "") + added;
    return added;
  }

  /** Appends one user message saying `text`; returns the line. */
  async say(store: MachineStoreName, path: string, text: string): Promise<string> {
    const key = `${store}/${path}`;
    await this.finishTornOf(key);
    const line = `${JSON.stringify({ type: "message", id: randomUUID().slice(0, 8), parentId: null, timestamp: "2026-01-01T00:00:02.000Z", message: { role: "user", content: text } })}\n`;
    await appendFile(join(this.root(store), path), line);
    const versions = this.versions.get(key)!;
    versions[versions.length - 1] += line;
    return line;
  }

  /** Writes the first part of one more entry: the agent is in the middle of writing it. */
  async tear(store: MachineStoreName, path: string): Promise<void> {
    const key = `${store}/${path}`;
    if (this.torn.has(key)) return;
    const line = await this.entry(store, 400);
    const cut = 1 + this.rng.int(line.length - 2);
    await appendFile(join(this.root(store), path), line.slice(0, cut));
    this.torn.set(key, { written: line.slice(0, cut), rest: line.slice(cut) });
  }

  /** Finishes every half-written line. */
  async finishTorn(): Promise<void> {
    for (const key of [...this.torn.keys()]) {
      const slash = key.indexOf("/");
      await this.append(key.slice(0, slash) as MachineStoreName, key.slice(slash + 1), 0, 0);
    }
  }

  /** A title set in place, as oh-my-pi does: the whole file written anew (temp file and rename), its first line changed. */
  async retitle(store: MachineStoreName, path: string): Promise<void> {
    const key = `${store}/${path}`;
    await this.finishTornOf(key);
    const versions = this.versions.get(key)!;
    const current = versions[versions.length - 1]!;
    const newline = current.indexOf("\n");
    const header = JSON.parse(current.slice(0, newline)) as Record<string, unknown>;
    const text = `${JSON.stringify({ ...header, title: words(this.rng, 40) })}${current.slice(newline)}`;
    const file = join(this.root(store), path);
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
    versions.push(text);
  }

  private async finishTornOf(key: string): Promise<void> {
    if (!this.torn.has(key)) return;
    const slash = key.indexOf("/");
    await this.append(key.slice(0, slash) as MachineStoreName, key.slice(slash + 1), 0, 0);
  }

  async remove(store: MachineStoreName, path: string): Promise<void> {
    const key = `${store}/${path}`;
    this.torn.delete(key);
    await rm(join(this.root(store), path));
    this.removed.add(key);
  }

  /** A random mix of what agents do, as between two syncs. */
  async work(entryBytes: number): Promise<void> {
    for (const store of Object.keys(MACHINE_STORES) as MachineStoreName[]) {
      const sessions = this.sessions(store);
      for (let i = 0; i < 6; i++) await this.append(store, this.rng.pick(sessions), 1 + this.rng.int(8), entryBytes);
      if (this.rng.chance(0.3)) await this.retitle(store, this.rng.pick(sessions));
      if (this.rng.chance(0.3)) await this.newSession(store, 20, entryBytes);
      if (this.rng.chance(0.4)) await this.tear(store, this.rng.pick(sessions));
      if (this.rng.chance(0.1) && sessions.length > 2) await this.remove(store, this.rng.pick(sessions));
    }
  }

  /** Every current session file's complete lines, by "<store>/<storage path>". */
  contents(): Map<string, string> {
    return new Map([...this.versions].filter(([key]) => this.isCurrent(key)).map(([key, versions]) => [key, versions.at(-1)!]));
  }

  /**
   * Checks a copy of this machine's store `store` (a port over its folder in the shared store):
   * with `exact`, every session file and every blob the sessions reference is there, byte-equal,
   * and nothing else is; else every file there is a prefix of some version of its source.
   * Returns how many session files of `baseline` (contents() of an earlier moment) the copy does
   * not hold yet.
   */
  async check(store: MachineStoreName, copy: StoragePort, exact: boolean, baseline = new Map<string, string>()): Promise<number> {
    const copied = await sessionFilesOf(copy);
    let behind = [...baseline.keys()].filter((key) => key.startsWith(`${store}/`) && !copied.includes(key.slice(store.length + 1))).length;
    for (const path of copied) {
      const key = `${store}/${path}`;
      const versions = this.versions.get(key);
      if (!versions) throw new Error(`${key}: copied, but never written by the machine`);
      const bytes = new TextDecoder().decode((await copy.read(path))!);
      const current = versions[versions.length - 1]!;
      if (exact && this.isCurrent(key) && bytes !== current) throw new Error(`${key}: the copy (${bytes.length} bytes) is not the source (${current.length} bytes)`);
      if (!versions.some((version) => version.startsWith(bytes))) throw new Error(`${key}: the copy (${bytes.length} bytes) is a prefix of no version of the source`);
      const then = baseline.get(key);
      if (then !== undefined && !bytes.startsWith(then)) behind++;
    }
    if (exact) {
      const missing = this.sessions(store).filter((path) => !copied.includes(path));
      if (missing.length > 0) throw new Error(`${store}: ${missing.length} sessions not copied: ${missing.slice(0, 3).join(", ")}`);
      const gone = copied.filter((path) => !this.isCurrent(`${store}/${path}`));
      if (gone.length > 0) throw new Error(`${store}: ${gone.length} sessions deleted on the machine are still in the copy`);
      for (const hash of this.referencedBlobs(store)) {
        const there = await copy.read(`blobs/${hash}`);
        if (!there || createHash("sha256").update(there).digest("hex") !== hash) throw new Error(`${store}: blob ${hash} missing or damaged in the copy`);
      }
    }
    return behind;
  }

  private referencedBlobs(store: MachineStoreName): string[] {
    const text = this.sessions(store)
      .map((path) => this.versions.get(`${store}/${path}`)!.at(-1)!)
      .join("");
    return [...new Set([...text.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((match) => match[1]!))];
  }

  /** The agent's folder as it is: every file with its bytes' hash (sync must change none, and add none). */
  async snapshot(): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const name of await readdir(this.home, { recursive: true, withFileTypes: true })) {
      if (!name.isFile()) continue;
      const file = join(name.parentPath, name.name);
      files[file] = createHash("sha256").update(await readFile(file)).digest("hex");
    }
    return files;
  }
}

/** The session files of a store's copy. */
async function sessionFilesOf(port: StoragePort): Promise<string[]> {
  const paths: string[] = [];
  for (const dir of await port.list("sessions")) {
    if (dir.kind !== "dir") continue;
    for (const file of await port.list(`sessions/${dir.name}`)) if (file.kind === "file") paths.push(`sessions/${dir.name}/${file.name}`);
  }
  return paths;
}

const VOCABULARY = "append torn line session sync store machine team blob header entry agent tool result model context branch leaf".split(" ");

/** About `bytes` of words. */
function words(rng: Rng, bytes: number): string {
  let text = "";
  while (text.length < bytes) text += `${rng.pick(VOCABULARY)} `;
  return text.trimEnd();
}
