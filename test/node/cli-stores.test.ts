/**
 * Every agent's store, as the CLI finds it in a fake $HOME: pi, oh-my-pi, xcsh and indusagi in
 * pi's folders and one seed-003 profile in its flat folder, holding the real corpus files (copied,
 * or written in seed 003's dialect for the profile). Without --root, `ls`, `show` and `export`
 * cover them all and say whose each session is; --agent narrows; nothing under $HOME changes: the
 * listing's catalog goes to the cache directory. Also: a read-only store folder (really read-only:
 * the CLI runs as another user) keeps its catalog in the cache like any other.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { discoverAgentStores, storeAt } from "../../cli/agent-stores.js";
import { cacheRoot } from "../../cli/cache-root.js";
import { KIT_DIR, storeCacheDir } from "../../cli/store-cache.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { encodeSessionFile, readSessionFile } from "../../src/format/session-file.js";
import { seed003FileName, sessionDirFor, sessionFileName } from "../../src/session/paths.js";
import { verifyArchive } from "../../src/archive/index.js";
import type { SessionHeader } from "../../src/index.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";
import { CORPUS_DIR } from "../shared/corpus.js";

type Agent = "pi" | "omp" | "xcsh" | "indusagi" | "operator";
const AGENT_ROOTS: Record<Exclude<Agent, "operator">, string> = { pi: ".pi/agent", omp: ".omp/agent", xcsh: ".xcsh/agent", indusagi: ".indusagi/agent" };
const PROFILE = ".operator/profiles/work";

interface Planted {
  id: string;
  agent: Agent;
  /** The store root, absolute. */
  store: string;
  /** The session file, absolute. */
  file: string;
  cwd: string;
}

let tmp: string;
let home: string;
let cache: string;
let bundle: string;
const planted: Planted[] = [];

const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(bundle, args, { cwd: tmp, env: { HOME: home, XDG_CACHE_HOME: cache, ...env } });

/** Every file below `dir` with its sha256. */
async function hashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const file = join(dir, name);
    if ((await stat(file)).isFile()) out[name] = createHash("sha256").update(await readFile(file)).digest("hex");
  }
  return out;
}

async function corpusFiles(): Promise<string[]> {
  const names = (await readdir(CORPUS_DIR, { recursive: true })).filter((name) => name.endsWith(".jsonl")).sort();
  return names.map((name) => join(CORPUS_DIR, name));
}

/** A corpus file in seed 003's dialect: read (and migrated) by the kit, written back as seed 003 writes. */
async function inSeed003(source: string): Promise<{ bytes: Uint8Array; header: SessionHeader }> {
  const file = await readSessionFile(nodeFsStorage({ root: dirname(source) }), basename(source));
  if (file.kind !== "session") throw new Error(`${source}: ${file.kind}`);
  const { version: _version, ...header } = file.header; // seed 003's header has no version
  return { bytes: encodeSessionFile("seed003", header as SessionHeader, file.entries), header: header as SessionHeader };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sessionkit-stores-"));
  home = join(tmp, "home");
  cache = join(tmp, "cache");
  bundle = await bundleCli(tmp);
  const agents: Agent[] = ["pi", "omp", "xcsh", "indusagi", "operator"];
  for (const [i, source] of (await corpusFiles()).entries()) {
    const agent = agents[i % agents.length]!;
    if (agent === "operator") {
      const { bytes, header } = await inSeed003(source);
      const store = join(home, PROFILE);
      const file = join(store, "sessions", seed003FileName(header.timestamp, header.id));
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, bytes);
      planted.push({ id: header.id, agent, store, file, cwd: header.cwd ?? "" });
      continue;
    }
    const header = JSON.parse((await readFile(source, "utf8")).split("\n")[0]!) as SessionHeader;
    const store = join(home, AGENT_ROOTS[agent]);
    const file = join(store, ...sessionDirFor(header.cwd ?? "").split("/"), sessionFileName(header.timestamp, header.id));
    await mkdir(dirname(file), { recursive: true });
    await cp(source, file);
    await chmod(file, 0o644);
    planted.push({ id: header.id, agent, store, file, cwd: header.cwd ?? "" });
  }
  // Not stores: a profile without sessions/, an agent folder's neighbour.
  await mkdir(join(home, ".operator/profiles/empty"), { recursive: true });
  await mkdir(join(home, ".config/other"), { recursive: true });
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

interface Listed {
  id: string;
  path: string;
  agent: Agent;
  store: string;
  cwd: string;
  firstMessage: string;
}

describe("discovery", () => {
  it("finds the five agents' stores, each seed-003 profile with a sessions/ folder, and nothing else", async () => {
    const stores = await discoverAgentStores({ home, env: {} });
    expect(stores.map((store) => [store.agent, store.root, store.layout, store.label])).toEqual([
      ["pi", join(home, ".pi/agent"), "pi", "pi ~/.pi/agent"],
      ["omp", join(home, ".omp/agent"), "omp", "omp ~/.omp/agent"],
      ["xcsh", join(home, ".xcsh/agent"), "omp", "xcsh ~/.xcsh/agent"],
      ["indusagi", join(home, ".indusagi/agent"), "pi", "indusagi ~/.indusagi/agent"],
      ["operator", join(home, PROFILE), "seed003", "operator ~/.operator/profiles/work"],
    ]);
  });

  it("$PI_CODING_AGENT_DIR moves pi's store; a store reached twice is listed once", async () => {
    const elsewhere = join(tmp, "pi-elsewhere");
    await mkdir(elsewhere, { recursive: true });
    expect((await discoverAgentStores({ home, env: { PI_CODING_AGENT_DIR: elsewhere } }))[0]).toMatchObject({ agent: "pi", root: elsewhere });
    const twice = await discoverAgentStores({ home, env: { PI_CODING_AGENT_DIR: join(home, ".omp/agent") } });
    expect(twice.map((store) => store.agent)).toEqual(["pi", "xcsh", "indusagi", "operator"]);
    await rm(elsewhere, { recursive: true });
  });

  it("a --root store is the discovered one there, else --agent's layout, else a guess from its folder", async () => {
    const stores = await discoverAgentStores({ home, env: {} });
    expect(await storeAt(join(home, ".xcsh/agent"), stores, home)).toEqual(stores[2]);
    expect((await storeAt(join(home, PROFILE), [], home)).layout).toBe("seed003");
    expect((await storeAt(join(home, ".pi/agent"), [], home)).layout).toBe("pi");
    expect((await storeAt(join(tmp, "new-store"), [], home, "omp")).layout).toBe("omp");
  });

  it("the catalog's folder is the one the CLI mounts from the cache, and each store has its own cache folder", () => {
    expect(CATALOG_DIR.startsWith(`${KIT_DIR}/`)).toBe(true);
    expect(cacheRoot({ XDG_CACHE_HOME: "/x/cache" }, home)).toBe("/x/cache/sessionkit");
    expect(cacheRoot({ XDG_CACHE_HOME: "relative" }, home)).toBe(join(home, ".cache/sessionkit"));
    expect(cacheRoot({}, home)).toBe(join(home, ".cache/sessionkit"));
    const dirs = new Set(["/a/.pi/agent", "/b/.pi/agent", "/a/.omp/agent"].map((root) => storeCacheDir(root, {}, home)));
    expect(dirs.size).toBe(3);
    expect(storeCacheDir("/a/.pi/agent", {}, home)).toMatch(/\/stores\/a-\.pi-agent-[0-9a-f]{12}$/);
  });
});

describe("the CLI over every store of a fake $HOME", () => {
  it("ls --all lists every session once, with its agent and store and an absolute path; nothing under $HOME changes", async () => {
    const before = await hashes(home);
    const result = await cli(["ls", "--all", "--json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const listed = JSON.parse(result.stdout) as Listed[];
    expect(listed.map((info) => info.id).sort()).toEqual(planted.map((p) => p.id).sort());
    for (const session of planted) {
      const info = listed.find((l) => l.id === session.id)!;
      expect(info, session.file).toMatchObject({ agent: session.agent, store: session.store, path: session.file, cwd: session.cwd });
    }
    expect(new Set(listed.map((info) => info.agent))).toEqual(new Set(["pi", "omp", "xcsh", "indusagi", "operator"]));
    const modified = listed.map((info) => Date.parse((info as unknown as { modified: string }).modified));
    expect(modified).toEqual([...modified].sort((a, b) => b - a));

    const table = await cli(["ls", "--all"]);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split("\n").slice(1, -1);
    expect(rows).toHaveLength(planted.length);
    for (const session of planted) expect(rows.find((row) => row.endsWith(session.file))!.split(/\s+/)[3]).toBe(session.agent);

    expect(await hashes(home)).toEqual(before);
    // The catalogs went to the cache: one folder per store read.
    const cached = await readdir(join(cache, "sessionkit/stores"));
    expect(cached).toHaveLength(5);
    for (const dir of cached) expect((await readdir(join(cache, "sessionkit/stores", dir, "catalog"))).length).toBeGreaterThan(0);
  });

  it("show by id prefix finds a session in any store, and says which", async () => {
    const before = await hashes(home);
    for (const agent of ["pi", "omp", "xcsh", "indusagi", "operator"] as const) {
      const session = planted.find((p) => p.agent === agent)!;
      const prefix = session.id.slice(0, 13);
      expect(planted.filter((p) => p.id.startsWith(prefix))).toHaveLength(1);
      const result = await cli(["show", prefix]);
      expect(result, `${agent}: ${result.stderr}`).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout).toContain(`session  ${session.id}\n`);
      expect(result.stdout).toContain(`file     ${session.file}\n`);
      expect(result.stdout).toContain(`store    ${agent} ~/${(agent === "operator" ? PROFILE : AGENT_ROOTS[agent])}\n`);
      if (agent === "operator") expect(result.stdout).toContain("header   snake_case Python agent · created");
      const json = JSON.parse((await cli(["show", prefix, "--json"])).stdout) as { agent: string; store: string; dialect: string };
      expect(json).toMatchObject({ agent, store: session.store, dialect: agent === "operator" ? "seed003" : "pi" });
    }
    expect(await hashes(home)).toEqual(before);
  });

  it("verify, tree, context and migrate read a seed-003 session as what it is", async () => {
    const before = await hashes(home);
    const session = planted.find((p) => p.agent === "operator")!;
    const prefix = session.id.slice(0, 13);
    const verify = await cli(["verify", prefix]);
    expect(verify.stdout).toMatch(new RegExp(`^${session.file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: OK \\(snake_case Python agent, \\d+ entries, \\d+ blob refs?\\)\n$`));
    const report = JSON.parse((await cli(["verify", prefix, "--json"])).stdout) as { dialect: string; version: unknown };
    expect(report).toMatchObject({ dialect: "seed003", version: null });
    const migrate = await cli(["migrate", prefix]);
    expect(migrate).toMatchObject({ code: 0, stdout: `${session.file}: the snake_case Python agent format has no versions, nothing to migrate\n` });
    const tree = JSON.parse((await cli(["tree", prefix, "--json"])).stdout) as Array<{ entry: { parentId: unknown } }>;
    expect(tree[0]!.entry).toHaveProperty("parentId", null); // canonical shapes, as for pi files
    const context = await cli(["context", prefix, "--json"]);
    expect(context.code).toBe(0);
    expect(await hashes(home)).toEqual(before);
  });

  it("--agent narrows ls and the id lookup to that agent's stores", async () => {
    const xcsh = JSON.parse((await cli(["--agent", "xcsh", "ls", "--all", "--json"])).stdout) as Listed[];
    expect(xcsh.map((info) => info.id).sort()).toEqual(planted.filter((p) => p.agent === "xcsh").map((p) => p.id).sort());
    const operatorSession = planted.find((p) => p.agent === "operator")!;
    const projects = JSON.parse((await cli(["--agent", "operator", "ls", "--cwd", operatorSession.cwd, "--json"])).stdout) as Listed[];
    expect(projects.map((info) => info.id).sort()).toEqual(planted.filter((p) => p.agent === "operator" && p.cwd === operatorSession.cwd).map((p) => p.id).sort());

    const piSession = planted.find((p) => p.agent === "pi")!;
    const elsewhere = await cli(["--agent", "omp", "show", piSession.id.slice(0, 13)]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`no session id in ${join(home, ".omp/agent")} starts with "${piSession.id.slice(0, 13)}"`);
    expect(await cli(["--agent", "nobody", "ls"])).toMatchObject({ code: 2, stderr: 'sessionkit: --agent must be pi, omp, xcsh, indusagi or operator (got "nobody") (see sessionkit --help)\n' });
  });

  it("export takes sessions of several stores; a seed-003 session goes into the archive as its bytes", async () => {
    const before = await hashes(home);
    const picks = (["operator", "omp"] as const).map((agent) => planted.find((p) => p.agent === agent)!);
    const out = join(tmp, "two-agents.zip");
    const result = await cli(["export", ...picks.map((p) => p.id.slice(0, 13)), "-o", out, "--json"]);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const verified = await verifyArchive(new Uint8Array(await readFile(out)));
    expect(verified.sessions.map((s) => s.id).sort()).toEqual(picks.map((p) => p.id).sort());
    const seedMember = verified.sessions.find((s) => s.id === picks[0]!.id)!;
    expect(seedMember.bytes).toBe((await stat(picks[0]!.file)).size);
    expect(await hashes(home)).toEqual(before);
  });

  it("without $XDG_CACHE_HOME the cache is ~/.cache/sessionkit, the only folder under $HOME that changes", async () => {
    const before = await hashes(home);
    const result = await runCli(bundle, ["ls", "--all", "--json"], { cwd: tmp, env: { HOME: home, XDG_CACHE_HOME: "" } });
    expect(result.code).toBe(0);
    const after = await hashes(home);
    const changed = Object.keys(after).filter((name) => after[name] !== before[name]);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.every((name) => name.startsWith(".cache/sessionkit/stores/"))).toBe(true);
    expect(Object.keys(before).filter((name) => !(name in after))).toEqual([]);
    await rm(join(home, ".cache"), { recursive: true });
  });

  it("with no store at all, ls says where it looked", async () => {
    const empty = join(tmp, "empty-home");
    await mkdir(empty, { recursive: true });
    const result = await runCli(bundle, ["ls", "--all"], { cwd: tmp, env: { HOME: empty, XDG_CACHE_HOME: cache } });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe("no sessions: no agent store found (looked for ~/.pi/agent, ~/.omp/agent, ~/.xcsh/agent, ~/.indusagi/agent, ~/.operator/profiles/*/sessions)\n");
  });
});

describe("a read-only store folder", () => {
  /** Runs the CLI as the unprivileged user `nobody`, for whom the store really is read-only. */
  function asNobody(args: string[], env: Record<string, string>): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(process.execPath, [bundle, ...args], { cwd: tmp, uid: 65534, gid: 65534, env: { PATH: process.env.PATH ?? "", PI_CODING_AGENT_DIR: "", ...env } }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
  }

  it.runIf(process.getuid?.() === 0)("lists through its catalog in the cache, which it keeps, like a writable one", async () => {
    const readOnlyHome = join(tmp, "ro-home");
    const store = join(readOnlyHome, ".pi/agent");
    await cp(join(home, ".pi/agent"), store, { recursive: true });
    const nobodyCache = join(tmp, "nobody-cache");
    await mkdir(nobodyCache);
    await chmod(nobodyCache, 0o777);
    // The CLI's bundle and every directory above the store readable; the store itself read-only.
    for (const dir of [tmp, readOnlyHome]) await chmod(dir, 0o755);
    for (const name of ["", ...(await readdir(store, { recursive: true }))]) {
      const path = join(store, name);
      await chmod(path, (await stat(path)).isDirectory() ? 0o555 : 0o444);
    }
    const before = await hashes(readOnlyHome);
    const env = { HOME: readOnlyHome, XDG_CACHE_HOME: nobodyCache };
    const first = await asNobody(["ls", "--all", "--json"], env);
    expect(first, first.stderr).toMatchObject({ code: 0, stderr: "" });
    expect((JSON.parse(first.stdout) as Listed[]).map((info) => info.id).sort()).toEqual(planted.filter((p) => p.agent === "pi").map((p) => p.id).sort());
    const catalogDir = join(storeCacheDir(store, env, readOnlyHome), "catalog");
    const catalogs = await readdir(catalogDir);
    expect(catalogs.length).toBeGreaterThan(0);
    const catalogBytes = await Promise.all(catalogs.map((name) => readFile(join(catalogDir, name))));
    const second = await asNobody(["ls", "--all", "--json"], env);
    expect(second.stdout).toBe(first.stdout);
    // Nothing changed, so the catalog was read, not rebuilt.
    expect(await Promise.all(catalogs.map((name) => readFile(join(catalogDir, name))))).toEqual(catalogBytes);
    expect(await hashes(readOnlyHome)).toEqual(before);
  });
});
