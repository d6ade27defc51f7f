/**
 * `sessionkit scan` as a real child process: exit 1 when something was found, 0 when clean; --json
 * prints what the API returns; progress for a cold scan of many files, none for a warm one (the
 * cache, kept outside the agent's folder, answers); session arguments; escapes on a terminal.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { SessionManager } from "../../src/index.js";
import { scanSessions } from "../../src/secrets/index.js";
import { SECRETS_DIR } from "../../src/secrets/scan.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";
import { mulberry32 } from "../shared/prng.js";
import { PLANTED_FIELDS, SECRET_KINDS, writePlantedSessions, type PlantedSecret } from "../shared/planted-secrets.js";

let dir: string;
let root: string;
let cli: string;
let planted: PlantedSecret[];
let cleanSession: string;

const sk = (...args: string[]): Promise<CliResult> => runCli(cli, ["--root", root, ...args]);
const cacheDir = () => join(dir, "cache");
const fileOf = (path: string) => join(root, ...path.split("/"));
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const reply = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-secrets-cli-"));
  root = join(dir, "agent");
  cli = await bundleCli(dir);
  const storage = nodeFsStorage({ root });
  planted = await writePlantedSessions(storage, "/work/app", mulberry32(11));
  // Clean sessions besides: 23 + 40 files, enough for progress lines when stderr is not a terminal.
  for (let i = 0; i < 40; i++) {
    const sm = await SessionManager.create(storage, i % 2 ? "/work/app" : "/work/other");
    sm.appendMessage({ role: "user", content: `set API_TIMEOUT=30 and read $GITHUB_TOKEN from the env (${i})`, timestamp: Date.now() });
    // pi writes a session's file once it has an assistant message.
    sm.appendMessage(reply("done"));
    await sm.close();
    if (i === 0) cleanSession = sm.getSessionFile()!;
  }
  await storage.close();
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("sessionkit scan", () => {
  it("exits 1 with every finding listed; a cold scan reports progress, a warm one is silent and reads the cache", async () => {
    await rm(cacheDir(), { recursive: true, force: true });
    const cold = await sk("scan", "--all");
    expect(cold.code).toBe(1);
    expect(cold.stderr).toMatch(/sessionkit: scan: 63\/63 session files scanned \(\d+(\.\d)? of \d+(\.\d)? MB\)/);
    expect(cold.stdout.trimEnd().split("\n").at(-1)).toBe(`${planted.length} findings in ${SECRET_KINDS.length} of 63 sessions in ${root}`);
    const first = planted[0]!;
    expect(cold.stdout).toContain(`  ${first.entryId}  ${first.kind.padEnd(Math.max(...planted.map((plant) => plant.kind.length)))}  sk-ant-…`);
    await expect(stat(join(root, SECRETS_DIR))).rejects.toThrow(); // the agent's folder is only read

    const [storeCache] = await readdir(join(cacheDir(), "sessionkit", "stores"));
    const cacheFile = join(cacheDir(), "sessionkit", "stores", storeCache!, "secrets", `${encodeURIComponent("sessions/--work-app--")}.json`);
    const before = await stat(cacheFile);
    const warm = await sk("scan", "--all");
    expect(warm.code).toBe(1);
    expect(warm.stderr).toBe("");
    expect(warm.stdout).toBe(cold.stdout);
    // Nothing changed: the cache answered and was not written again.
    expect((await stat(cacheFile)).mtimeMs).toBe(before.mtimeMs);
  });

  it("--json prints the API's findings with absolute paths, agent and store; no progress on a pipe", async () => {
    await rm(cacheDir(), { recursive: true, force: true });
    const printed = await sk("scan", "--all", "--json");
    expect(printed.code).toBe(1);
    expect(printed.stderr).toBe("");
    const storage = nodeFsStorage({ root });
    const { findings } = await scanSessions(storage, { cache: false });
    await storage.close();
    expect(JSON.parse(printed.stdout)).toEqual(findings.map((finding) => ({ ...finding, path: fileOf(finding.path), agent: "pi", store: root })));
  });

  it("without --all, the sessions of one project: --cwd of a clean project exits 0", async () => {
    const clean = await sk("scan", "--cwd", "/work/other");
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe(`no secrets found in 20 sessions of /work/other in ${root} (--all scans every project)\n`);
    expect((await sk("scan", "--cwd", "/work/app")).code).toBe(1);
  });

  it("session arguments: exit 1 for one with secrets, 0 for a clean one, 3 for a file that is no session; not with --all", async () => {
    const one = await sk("scan", fileOf(planted[0]!.path));
    expect(one.code).toBe(1);
    expect(one.stdout.trimEnd().split("\n").at(-1)).toBe(`${PLANTED_FIELDS.length} findings in 1 of 1 session`);
    const clean = await sk("scan", fileOf(cleanSession));
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe("no secrets found in 1 session\n");
    const notes = join(dir, "notes.jsonl");
    await writeFile(notes, '{"note":"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}\n');
    const invalid = await sk("scan", notes);
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toContain("is not a session file");
    const both = await sk("scan", "--all", fileOf(cleanSession));
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("scan takes sessions or --all, not both");
  });

  it("prints ESC and other controls of a session's text as visible \\xNN escapes", async () => {
    const loose = join(dir, "loose");
    await mkdir(loose, { recursive: true });
    const storage = nodeFsStorage({ root: loose });
    const sm = await SessionManager.create(storage, "/work/esc");
    sm.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
    sm.appendMessage(reply("hello"));
    sm.appendCustomEntry("ext", { "\x1b]0;pwned\x07": "DEPLOY_TOKEN=Qx7Lm2Vb9Zr4Tn8K" });
    await sm.close();
    await storage.close();
    const result = await sk("scan", join(loose, ...sm.getSessionFile()!.split("/")));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("/data/\\x1b]0;pwned\\x07");
    expect(result.stdout).not.toContain("\x1b");
  });
});
