/** `sessionkit --store postgres://…`: the CLI on a database store, as a real child process. */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { SessionManager, type SessionInfo } from "../../src/index.js";
import { bundleCli, runCli } from "../shared/cli-runner.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { dropSchema, freshSchema, openStorage, pgUrl } from "./helpers.js";

const schema = freshSchema("cli");
let tmp: string;
let bundle: string;
let storage: PostgresStorage;
const storeUrl = () => `${pgUrl()}?schema=${schema}`;
const sk = (...args: string[]) => runCli(bundle, ["--store", storeUrl(), ...args], { cwd: tmp });

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sessionkit-pg-cli-"));
  bundle = await bundleCli(tmp);
  storage = openStorage(schema);
});

afterAll(async () => {
  await storage.close();
  await dropSchema(schema);
  await rm(tmp, { recursive: true, force: true });
});

describe("sessionkit --store postgres://…", () => {
  it("imports a directory of pi files into the database, then lists, shows, verifies and exports from it", async () => {
    const imported = await sk("import", join(CORPUS_DIR, "badlogic__pi-mono"), "--json");
    expect(imported.stderr).not.toMatch(/error|unexpected/i);
    expect(imported.code).toBe(0);
    const summary = JSON.parse(imported.stdout) as { sessions: { action: string; path: string; id: string }[] };
    expect(summary.sessions.length).toBeGreaterThan(3);
    expect(summary.sessions.every((s) => s.action === "created")).toBe(true);

    const listed = await sk("ls", "--all", "--json");
    expect(listed.code).toBe(0);
    const infos = JSON.parse(listed.stdout) as SessionInfo[];
    // ls adds each session's agent and store (here the database, named by its URL).
    const expected = JSON.parse(JSON.stringify((await SessionManager.listAll(storage)).map((info) => ({ ...info, agent: "pi", store: storeUrl() }))));
    expect(infos).toEqual(expected);
    expect(infos.map((info) => info.path).sort()).toEqual(summary.sessions.map((s) => s.path).sort());

    const table = await sk("ls", "--all");
    expect(table.stdout).toContain(summary.sessions[0]!.path);

    const first = summary.sessions[0]!;
    const shown = await sk("show", first.id.slice(0, 8));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`session  ${first.id}`);
    expect(shown.stdout).toContain(`file     ${first.path}`);
    const byPath = await sk("context", first.path, "--json");
    expect(byPath.code).toBe(0);
    const sm = await SessionManager.open(storage, first.path, { readOnly: true });
    expect(JSON.parse(byPath.stdout)).toEqual(JSON.parse(JSON.stringify(sm.buildSessionContext())));
    await sm.close();

    const verified = await sk("verify", first.id);
    expect(verified.stdout).toContain(first.path);

    const archive = join(tmp, "out.zip");
    const exported = await sk("export", first.id, "-o", archive);
    expect(exported.code, exported.stderr).toBe(0);
    expect((await readFile(archive)).subarray(0, 2).toString("latin1")).toBe("PK");

    const again = await sk("import", archive, "--json");
    expect(JSON.parse(again.stdout).sessions.map((s: { action: string }) => s.action)).toEqual(["skipped"]);
  });

  it("refuses --root or --agent with --store and a URL that is not postgres://, as usage errors", async () => {
    const both = await runCli(bundle, ["--root", tmp, "--store", storeUrl(), "ls"]);
    expect(both).toMatchObject({ code: 2, stderr: "sessionkit: --store names a database store: it takes no --root (see sessionkit --help)\n" });
    const agent = await runCli(bundle, ["--agent", "omp", "--store", storeUrl(), "ls"]);
    expect(agent).toMatchObject({ code: 2, stderr: "sessionkit: --store names a database store: it takes no --agent (see sessionkit --help)\n" });
    const other = await runCli(bundle, ["--store", "mysql://x/y", "ls"]);
    expect(other).toMatchObject({ code: 2, stderr: 'sessionkit: --store takes a postgres:// URL (got "mysql://x/y") (see sessionkit --help)\n' });
  });

  it("an unreachable server is one line naming the store, without its password", async () => {
    const result = await runCli(bundle, ["--store", "postgres://postgres:secret@127.0.0.1:1/db", "ls", "--all"]);
    expect(result.code).toBe(4); // failed: the database cannot be reached (docs/cli.md, exit codes)
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^sessionkit: ls: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain("secret");
  });
});
