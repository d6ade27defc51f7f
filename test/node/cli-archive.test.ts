/**
 * `sessionkit export`, `import` and `verify` of archives as real child processes, over a sample
 * store built by scripts/build-samples.ts and copies of corpus files, in a temp dir. What --json
 * prints is compared with what the archive API returns for the same input; stores are compared by
 * `ls --json` and `context --json`, and by the sha256 of every file before and after.
 */
import { openAsBlob } from "node:fs";
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { buildSamples, type SampleSession, type SampleStore } from "../../scripts/build-samples.js";
import { exportArchive, importArchive, importSessionFiles, verifyArchive } from "../../src/archive/index.js";
import { buildSessionContext, SessionManager, type ExportSummary, type ImportSummary, type SessionInfo, type VerifySummary } from "../../src/index.js";
import { bundleCli, runCli, type CliOptions, type CliResult } from "../shared/cli-runner.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { rebuildZip, zipBytes, zipMembers } from "../shared/zip-fixtures.js";
import { listing, memorySink } from "./archive/helpers.js";

let tmp: string;
let cliBundle: string;
let root: string;
let store: SampleStore;
let storage: ReturnType<typeof nodeFsStorage>;

const cli = (args: string[], options?: CliOptions): Promise<CliResult> => runCli(cliBundle, args, options);
/** `cli` with --root of the sample store. */
const sk = (...args: string[]) => cli(["--root", root, ...args]);
/** `cli` with --root `dir`. */
const skIn = (dir: string, ...args: string[]) => cli(["--root", dir, ...args]);

const toJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const sample = (kind: SampleSession["kind"]) => store.sessions.find((s) => s.kind === kind)!;
const fileOf = (kind: SampleSession["kind"]) => join(root, sample(kind).path);

let dirs = 0;
/** A new empty directory under the temp dir. */
async function freshDir(name: string): Promise<string> {
  const dir = join(tmp, `${name}-${++dirs}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** A corpus file copied (writable, as a user's own file is) to `dir`/`as`. */
async function copyCorpus(name: string, dir: string, as = basename(name)): Promise<string> {
  const file = join(dir, as);
  await mkdir(dirname(file), { recursive: true });
  await copyFile(join(CORPUS_DIR, name), file);
  await chmod(file, 0o644);
  return file;
}

function parsed<T>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/**
 * The sha256 listing of a store's sessions and blobs. `ls` keeps a catalog of what it read under
 * .sessionkit/ (a cache, rebuilt at will): it is not part of what a store holds.
 */
async function storeListing(dir: string): Promise<Awaited<ReturnType<typeof listing>>> {
  return (await listing(dir)).filter((file) => !file.path.startsWith(".sessionkit/"));
}

/** What `ls --all --json` says about each session that survives a move between stores. */
async function listed(dir: string): Promise<unknown[]> {
  const infos = parsed<SessionInfo[]>(await skIn(dir, "ls", "--all", "--json"));
  return infos.map((info) => ({ id: info.id, messageCount: info.messageCount, name: info.name, cwd: info.cwd, firstMessage: info.firstMessage })).sort((a, b) => a.id.localeCompare(b.id));
}

beforeAll(async () => {
  // Real path: file arguments are resolved through symlinks (a macOS /tmp is one).
  tmp = await realpath(await mkdtemp(join(tmpdir(), "sessionkit-cli-archive-")));
  cliBundle = await bundleCli(tmp);
  root = join(tmp, "store");
  store = await buildSamples(root);
  storage = nodeFsStorage({ root });
});

afterAll(async () => {
  await storage?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("export → verify → import", () => {
  let archive: string;
  let exported: CliResult;
  let storeBefore: Awaited<ReturnType<typeof storeListing>>;

  beforeAll(async () => {
    storeBefore = await storeListing(root);
    archive = join(await freshDir("out"), "all.zip");
    // Session ids for half of the sessions, file paths for the others.
    const args = store.sessions.map((s, i) => (i % 2 === 0 ? s.id : join(root, s.path)));
    exported = await sk("export", ...args, "-o", archive, "--json");
  });

  it("export --json prints the API's summary; the store is read, not written", async () => {
    const summary = parsed<ExportSummary>(exported);
    expect(await storeListing(root)).toEqual(storeBefore);
    const sink = memorySink();
    const api = await exportArchive(storage, store.sessions.map((s) => s.path), sink.sink);
    // The manifest's creation time differs, and with it the deflated size by a byte or so.
    expect(summary).toEqual({ ...(toJson(api) as ExportSummary), archiveBytes: summary.archiveBytes });
    expect(summary.sessions.map((s) => s.id)).toEqual(store.sessions.map((s) => s.id));
    expect(summary.blobs.count).toBe(store.blobs);
    expect(summary.archiveBytes).toBe((await stat(archive)).size);
    const members = (await zipMembers(await readFile(archive))).map((m) => m.name);
    expect(members.filter((name) => name.startsWith("sessions/")).sort()).toEqual(store.sessions.map((s) => `sessions/${s.id}.jsonl`).sort());
    expect(members.filter((name) => name.startsWith("blobs/"))).toHaveLength(store.blobs);
    expect(members[0]).toBe("manifest.json");
    // The v1 session is normalized on the way, and the warning names its file.
    expect(exported.stderr).toBe(`sessionkit: export: ${fileOf("legacy-v1")}: migrated from v1 for the archive\n`);
    expect(await readdir(dirname(archive))).toEqual(["all.zip"]);
  });

  it("verify: exit 0, --json is verifyArchive's summary, the text names what is inside", async () => {
    const [json, text] = await Promise.all([cli(["verify", archive, "--json"]), cli(["verify", archive])]);
    const summary = parsed<VerifySummary>(json);
    expect(summary).toEqual(toJson(await verifyArchive(await openAsBlob(archive))));
    expect(summary.sessions).toHaveLength(store.sessions.length);
    const entries = summary.sessions.reduce((n, s) => n + s.entries, 0);
    const size = (await stat(archive)).size;
    expect(text).toMatchObject({ code: 0, stderr: "" });
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${archive}: OK (sessionkit-archive 1.0 by sessionkit, 8 sessions, ${entries} entries, 2 blobs, ${size} bytes)`);
    expect(lines).toContain(`  ${sample("branching").id}  27 entries  /home/demo/webapp`);
  });

  it("import into an empty root (pi's, as the CLI takes a root it does not know): --json is the API's summary; images inline, no blobs; ls and every context equal the source's", async () => {
    const target = await freshDir("roundtrip");
    const plan = await importArchive(nodeFsStorage({ root: target }), await openAsBlob(archive), { dryRun: true });
    expect(await listing(target)).toEqual([]);
    const summary = parsed<ImportSummary>(await skIn(target, "import", archive, "--json"));
    expect(summary).toEqual(toJson({ ...plan, dryRun: false }));
    expect(summary.sessions.map((s) => s.action)).toEqual(store.sessions.map(() => "created"));
    // The archive's images are refs to its blobs; pi resolves none, so they are written inline.
    expect(summary.blobs).toEqual({ written: 0, present: 0, bytesWritten: 0 });
    expect(await readdir(target)).toEqual(["sessions"]);
    for (const session of summary.sessions) expect(await readFile(join(target, session.path), "utf8")).not.toContain("blob:sha256:");

    expect(await listed(target)).toEqual(await listed(root));
    const contexts = await Promise.all(
      store.sessions.flatMap((session) => {
        const imported = summary.sessions.find((s) => s.id === session.id)!;
        return [sk("context", join(root, session.path), "--json"), skIn(target, "context", join(target, imported.path), "--json")];
      }),
    );
    for (let i = 0; i < contexts.length; i += 2) {
      expect(contexts[i]!.code, contexts[i]!.stderr).toBe(0);
      expect(contexts[i + 1]!.code, contexts[i + 1]!.stderr).toBe(0);
      expect(contexts[i + 1]!.stdout).toBe(contexts[i]!.stdout);
    }
    expect(await storeListing(root)).toEqual(storeBefore);
  });

  it("importing the same archive again changes nothing (every session skipped)", async () => {
    const target = await freshDir("again");
    expect((await skIn(target, "import", archive)).code).toBe(0);
    const before = await listing(target);
    const again = await skIn(target, "import", archive);
    expect(again).toMatchObject({ code: 0, stderr: "" });
    expect(await listing(target)).toEqual(before);
    const lines = again.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${archive}: 8 sessions into ${target}`);
    expect(lines.filter((line) => line.startsWith("  skipped  "))).toHaveLength(8);
    expect(lines.at(-1)).toBe("blobs: 0 written (0 bytes), 0 already stored");
  });

  it("--dry-run writes nothing (not even a missing root) and prints the same plan", async () => {
    const parent = await freshDir("dry");
    const target = join(parent, "new-root");
    const dry = await skIn(target, "import", archive, "--dry-run", "--json");
    const plan = parsed<ImportSummary>(dry);
    expect(await readdir(parent)).toEqual([]);
    expect(plan.dryRun).toBe(true);
    const real = parsed<ImportSummary>(await skIn(target, "import", archive, "--json"));
    expect(real).toEqual({ ...plan, dryRun: false });
    const text = await skIn(target, "import", archive, "--dry-run");
    expect(text.stdout.split("\n")[0]).toBe(`${archive}: 8 sessions into ${target} (dry run: nothing written)`);
  });
});

describe("export options", () => {
  it("--leaf exports one branch; imported, its context is the branch's", async () => {
    const branching = sample("branching");
    const sm = await SessionManager.open(storage, branching.path, { readOnly: true });
    const optionB = sm.getEntries().find((entry) => sm.getLabel(entry.id) === "option-b")!;
    const out = join(await freshDir("branch"), "branch.zip");
    const summary = parsed<ExportSummary>(await sk("export", branching.id, "--leaf", optionB.id, "-o", out, "--json"));
    expect(summary.sessions).toHaveLength(1);
    expect(summary.sessions[0]).toMatchObject({ leafId: optionB.id, originalPath: branching.path });
    expect(summary.sessions[0]!.entries).toBeLessThan(branching.entries);

    const target = await freshDir("branch-root");
    const imported = parsed<ImportSummary>(await skIn(target, "import", out, "--json"));
    const file = join(target, imported.sessions[0]!.path);
    const [context, show] = await Promise.all([skIn(target, "context", file, "--json"), skIn(target, "show", file, "--json")]);
    expect(parsed(context)).toEqual(toJson(buildSessionContext(sm.getEntries(), optionB.id)));
    expect(parsed<{ header: { parentSession: string } }>(show).header.parentSession).toBe(branching.path);

    // The same branch exported again is the same session: importing it again changes nothing.
    const before = await listing(target);
    const out2 = join(dirname(out), "branch-again.zip");
    expect((await sk("export", fileOf("branching"), "--leaf", optionB.id, "-o", out2)).code).toBe(0);
    expect(parsed<ImportSummary>(await skIn(target, "import", out2, "--json")).sessions.map((s) => s.action)).toEqual(["skipped"]);
    expect(await listing(target)).toEqual(before);
  });

  it("--leaf with an entry the session lacks: exit 1 (not found) naming the file and the entry, no archive", async () => {
    const dir = await freshDir("bad-leaf");
    const result = await sk("export", sample("branching").id, "--leaf", "nonesuch", "-o", join(dir, "x.zip"));
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: `sessionkit: export: ${fileOf("branching")}: entry nonesuch is not in the session [not-found]\n` });
    expect(await readdir(dir)).toEqual([]);
  });

  it("--no-blobs leaves the blobs out; their refs stay and an import reports them missing", async () => {
    const out = join(await freshDir("no-blobs"), "images.zip");
    const summary = parsed<ExportSummary>(await sk("export", fileOf("images"), "--no-blobs", "-o", out, "--json"));
    expect(summary.blobs).toEqual({ count: 0, bytes: 0 });
    expect((await zipMembers(await readFile(out))).map((m) => m.name)).toEqual(["manifest.json", `sessions/${sample("images").id}.jsonl`]);
    const verified = parsed<VerifySummary>(await cli(["verify", out, "--json"]));
    const stored = (await readdir(join(root, "blobs"))).sort();
    expect(verified.blobsNotInArchive).toEqual(stored);

    const target = await freshDir("no-blobs-root");
    const result = await skIn(target, "import", out, "--json");
    const imported = parsed<ImportSummary>(result);
    expect(imported.missingBlobs).toEqual(stored);
    expect(imported.warnings).toHaveLength(stored.length);
    expect(result.stderr).toBe(imported.warnings.map((warning) => `sessionkit: import: ${warning}\n`).join(""));
    for (const hash of stored) expect(result.stderr).toContain(hash);
    expect(await readdir(target)).toEqual(["sessions"]);
  });

  it("files outside the root are read in place, each with its blobs from the store it belongs to", async () => {
    const emptyRoot = await freshDir("other-root");
    const looseDir = await freshDir("loose");
    const loose = join(looseDir, "branching.jsonl");
    await copyFile(fileOf("branching"), loose);
    const [storeBefore, looseBefore] = [await listing(root), await listing(looseDir)];
    const out = join(await freshDir("outside"), "outside.zip");
    // The images file is in pi's layout under the sample store: its blobs come from there. The
    // loose file is named relative to the cwd. Neither is in the root: both go by absolute path.
    const result = await cli(["--root", emptyRoot, "export", fileOf("images"), "branching.jsonl", "-o", out, "--json"], { cwd: looseDir });
    const summary = parsed<ExportSummary>(result);
    expect(summary.sessions.map((s) => s.originalPath)).toEqual([fileOf("images"), loose]);
    expect(summary.blobs.count).toBe(store.blobs);
    expect(summary.missingBlobs).toEqual([]);
    expect(await listing(root)).toEqual(storeBefore);
    expect(await listing(looseDir)).toEqual(looseBefore);
    expect(await readdir(emptyRoot)).toEqual([]);
  });

  it("a file outside any store has no blobs to give: they are left out, with a warning each", async () => {
    const looseDir = await freshDir("loose-images");
    const loose = join(looseDir, "images.jsonl");
    await copyFile(fileOf("images"), loose);
    const out = join(looseDir, "images.zip");
    const result = await sk("export", loose, "-o", out, "--json");
    const summary = parsed<ExportSummary>(result);
    const stored = (await readdir(join(root, "blobs"))).sort();
    expect(summary.missingBlobs).toEqual(stored);
    expect(summary.blobs.count).toBe(0);
    expect(result.stderr).toBe(stored.map((hash) => `sessionkit: export: blob ${hash} is referenced but not stored: left out (the sessions keep the ref)\n`).join(""));
    expect((await readdir(looseDir)).sort()).toEqual(["images.jsonl", "images.zip"]);
  });

  it("an existing -o file is replaced only with --force (without it: exit 4, failed)", async () => {
    const dir = await freshDir("force");
    const out = join(dir, "two.zip");
    await writeFile(out, "an archive the user keeps");
    const refused = await sk("export", sample("custom").id, "-o", out);
    expect(refused).toMatchObject({ code: 4, stdout: "", stderr: `sessionkit: export: ${out} exists: not replacing it (use --force to replace it)\n` });
    expect(await readFile(out, "utf8")).toBe("an archive the user keeps");
    expect(await readdir(dir)).toEqual(["two.zip"]);
    const forced = await sk("export", sample("custom").id, "-o", out, "--force", "--json");
    expect(forced.code).toBe(0);
    expect(parsed<ExportSummary>(forced).sessions.map((s) => s.id)).toEqual([sample("custom").id]);
    expect((await readFile(out)).subarray(0, 4)).toEqual(Buffer.from("PK\x03\x04", "latin1"));
  });

  it("a failure mid-archive leaves no half archive and the previous output as it was", async () => {
    // A copy of the store whose first blob no longer hashes to its name: export fails on it,
    // after the sessions were written to the stream.
    const corrupt = await freshDir("corrupt");
    await cp(root, corrupt, { recursive: true });
    const [hash] = (await readdir(join(corrupt, "blobs"))).sort();
    const blob = join(corrupt, "blobs", hash!);
    await writeFile(blob, "not the image any more");
    const dir = await freshDir("kept");
    const out = join(dir, "images.zip");
    await writeFile(out, "the previous archive");
    const result = await skIn(corrupt, "export", join(corrupt, sample("images").path), "-o", out, "--force");
    expect(result.code).toBe(3); // invalid: the store's data
    expect(result.stderr).toMatch(new RegExp(`^sessionkit: export: ${blob}: the stored blob hashes to [0-9a-f]{64}: the store is corrupt \\[blob-hash\\]\n$`));
    expect(await readdir(dir)).toEqual(["images.zip"]);
    expect(await readFile(out, "utf8")).toBe("the previous archive");
  });
});

describe("import of plain session files", () => {
  it("a corpus .jsonl into pi's store: migrated, images kept inline (no blobs), the same context; the file untouched", async () => {
    const dir = await freshDir("one-file");
    const file = await copyCorpus("hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl", dir);
    const before = await listing(dir);
    const target = await freshDir("one-file-root");
    const plan = await importSessionFiles(nodeFsStorage({ root: target }), [{ name: file, bytes: await readFile(file) }], { dryRun: true });
    const summary = parsed<ImportSummary>(await skIn(target, "import", file, "--json"));
    expect(summary).toEqual(toJson({ ...plan, dryRun: false }));
    expect(summary.sessions).toMatchObject([{ source: file, action: "created", id: "019e17ed-dd93-72ed-8a55-e44bfa9d2253" }]);
    expect(summary.blobs).toEqual({ written: 0, present: 0, bytesWritten: 0 });
    expect(await readdir(target)).toEqual(["sessions"]);
    expect(await readFile(join(target, summary.sessions[0]!.path), "utf8")).toContain('"type":"image","data":"iVBORw0KGgo');
    const [imported, original] = await Promise.all([skIn(target, "context", join(target, summary.sessions[0]!.path), "--json"), skIn(target, "context", file, "--json")]);
    expect(parsed(imported)).toEqual(parsed(original));
    expect(await listing(dir)).toEqual(before);
  });

  it("a directory (pi's sessions/ tree): every .jsonl below it as one batch; again, nothing changes", async () => {
    const tree = join(await freshDir("agent"), "sessions");
    const names = [
      "badlogic__pi-mono/compact.jsonl", // v1, inline images, a glued line
      "twKrash__pi-session-inspector/branching.jsonl",
      "frinfo702__dotfiles/2026-05-26T05-30-28-297Z_019e62c3-5249-7057-9390-c72853be72e9.jsonl",
    ];
    const files = [
      await copyCorpus(names[0]!, join(tree, "--Users-badlogic-workspaces-pi-mono--")),
      await copyCorpus(names[1]!, join(tree, "--fixture--")),
      await copyCorpus(names[2]!, join(tree, "--deeper--", "nested")),
    ];
    await writeFile(join(tree, "--fixture--", "notes.txt"), "not a session: not imported");
    const before = await listing(tree);
    const target = await freshDir("batch-root");
    const result = await skIn(target, "import", tree, "--json");
    const summary = parsed<ImportSummary>(result);
    expect(summary.sessions.map((s) => s.source)).toEqual([...files].sort());
    expect(summary.sessions.every((s) => s.action === "created")).toBe(true);
    expect(result.stderr).toContain(`sessionkit: import: ${files[0]}: line 1013: 2 JSON objects glued on one line (recovered 2)\n`);
    const ids = await Promise.all(files.map(async (file) => (JSON.parse((await readFile(file, "utf8")).split("\n")[0]!) as { id: string }).id));
    expect((await listed(target)).map((info) => (info as { id: string }).id)).toEqual([...ids].sort());
    expect(await listing(tree)).toEqual(before);

    const stored = await listing(target);
    const again = parsed<ImportSummary>(await skIn(target, "import", tree, "--json"));
    expect(again.sessions.map((s) => s.action)).toEqual(["skipped", "skipped", "skipped"]);
    expect(await listing(target)).toEqual(stored);
  });

  it("a batch with a line that is not JSON: exit 3 (invalid) naming the file and line, nothing written", async () => {
    const dir = await freshDir("bad-batch");
    await copyCorpus("twKrash__pi-session-inspector/branching.jsonl", dir, "a-good.jsonl");
    const bad = await copyCorpus("frinfo702__dotfiles/2026-05-26T05-30-28-297Z_019e62c3-5249-7057-9390-c72853be72e9.jsonl", dir, "b-bad.jsonl");
    const lines = (await readFile(bad, "utf8")).split("\n");
    lines.splice(2, 0, "{not json");
    await writeFile(bad, lines.join("\n"));
    const before = await listing(root);
    const result = await sk("import", dir);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(new RegExp(`^sessionkit: import: ${bad}: line 3: .*\\[bad-session\\]\n$`));
    expect(await listing(root)).toEqual(before);
  });
});

describe("hostile archives", () => {
  it("a member named ../evil: verify and import exit 3 (invalid) naming it, the root unchanged, nothing written beside it", async () => {
    const dir = await freshDir("hostile");
    const file = join(dir, "evil.zip");
    await writeFile(file, await zipBytes([{ name: "manifest.json", data: "{}" }, { name: "../evil", data: "escaped" }]));
    const [text, json] = await Promise.all([cli(["verify", file]), cli(["verify", file, "--json"])]);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(new RegExp(`^${file}: invalid archive: \\.\\./evil: unsafe member name "\\.\\./evil" .*\\[unsafe-name\\]\n$`));
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: "ArchiveError", code: "unsafe-name", member: "../evil" });

    const before = await listing(tmp);
    const imported = await sk("import", file);
    expect(imported.code).toBe(3);
    expect(imported.stdout).toBe("");
    expect(imported.stderr).toMatch(new RegExp(`^sessionkit: import: ${file}: \\.\\./evil: unsafe member name .*\\[unsafe-name\\]\n$`));
    expect(await listing(tmp)).toEqual(before);
  });

  it("a blob whose bytes do not match its name: verify names the member, import writes nothing", async () => {
    const sink = memorySink();
    await exportArchive(storage, [sample("images").path], sink.sink);
    let tampered = "";
    const bytes = await rebuildZip(sink.bytes(), (members) => {
      const blob = members.find((m) => m.name.startsWith("blobs/"))!;
      tampered = blob.name;
      blob.data = "not the image";
    });
    const file = join(await freshDir("tampered"), "tampered.zip");
    await writeFile(file, bytes);
    const verified = await cli(["verify", file, "--json"]);
    expect(verified.code).toBe(3);
    expect(JSON.parse(verified.stdout)).toMatchObject({ code: "manifest-mismatch", member: tampered });

    const target = await freshDir("tampered-root");
    const imported = await skIn(target, "import", file);
    expect(imported.code).toBe(3);
    expect(imported.stderr).toMatch(new RegExp(`^sessionkit: import: ${file}: ${tampered}: .*\\[manifest-mismatch\\]\n$`));
    expect(await readdir(target)).toEqual([]);
  });
});

describe("--on-conflict", () => {
  it("extends a stored prefix, forks a diverged session, and skips, replaces or forks as asked", async () => {
    const origin = await freshDir("origin");
    const originStorage = nodeFsStorage({ root: origin });
    const sm = await SessionManager.create(originStorage, "/home/demo/conflicts", { deferUntilAssistant: false });
    sm.appendMessage({ role: "user", content: "first question", timestamp: Date.now() });
    await sm.close();
    const path = sm.getSessionFile()!;
    const id = sm.getSessionId();
    const out = await freshDir("conflict-archives");
    const exportTo = async (name: string) => {
      const file = join(out, name);
      expect((await skIn(origin, "export", id, "-o", file)).code).toBe(0);
      return file;
    };
    const first = await exportTo("first.zip");
    const grown = await SessionManager.open(originStorage, path);
    grown.appendMessage({ role: "user", content: "a second question", timestamp: Date.now() });
    await grown.close();
    const second = await exportTo("second.zip");
    await originStorage.close();

    const actions = async (target: string, archive: string, ...flags: string[]) => {
      const summary = parsed<ImportSummary>(await skIn(target, "import", archive, "--json", ...flags));
      return summary.sessions.map((s) => [s.action, s.newEntries]);
    };
    const grownRoot = await freshDir("conflict-grown");
    expect(await actions(grownRoot, first)).toEqual([["created", 1]]);
    expect(await actions(grownRoot, second)).toEqual([["extended", 1]]);
    expect(await actions(grownRoot, first)).toEqual([["skipped", 0]]);

    // A store whose copy went its own way after the first entry: the grown session diverges.
    const divergedRoot = await freshDir("conflict-diverged");
    expect(await actions(divergedRoot, first)).toEqual([["created", 1]]);
    const divergedStorage = nodeFsStorage({ root: divergedRoot });
    const local = await SessionManager.open(divergedStorage, path);
    local.appendMessage({ role: "user", content: "a question only this store has", timestamp: Date.now() });
    await local.close();
    await divergedStorage.close();
    const stored = await listing(divergedRoot);
    expect(await actions(divergedRoot, second, "--on-conflict", "skip")).toEqual([["skipped", 0]]);
    expect(await actions(divergedRoot, second, "--on-conflict", "replace", "--dry-run")).toEqual([["replaced", 2]]);
    expect(await listing(divergedRoot)).toEqual(stored);
    const forked = await skIn(divergedRoot, "import", second);
    expect(forked.code).toBe(0);
    const line = forked.stdout.split("\n")[1]!;
    expect(line).toMatch(new RegExp(`^ {2}forked {3}[\\w-]+  ${join(divergedRoot, "sessions")}/\\S+\\.jsonl  \\(diverged from the stored session: imported as a fork\\)$`));
    expect(await actions(divergedRoot, second)).toEqual([["skipped", 0]]);
    expect(await actions(divergedRoot, second, "--on-conflict", "fork")).toEqual([["skipped", 0]]);
    expect(await actions(divergedRoot, second, "--on-conflict", "replace")).toEqual([["replaced", 2]]);
    expect(await actions(divergedRoot, second)).toEqual([["skipped", 0]]);
  });
});

describe("progress", () => {
  it("export and import of many sessions report progress on stderr (not a terminal: a line per quarter)", async () => {
    const many = await freshDir("many");
    const manyStorage = nodeFsStorage({ root: many });
    const files: string[] = [];
    for (let i = 0; i < 60; i++) {
      const sm = await SessionManager.create(manyStorage, "/home/demo/many", { deferUntilAssistant: false });
      sm.appendMessage({ role: "user", content: `question ${i}`, timestamp: Date.now() });
      await sm.close();
      files.push(join(many, sm.getSessionFile()!));
    }
    await manyStorage.close();
    const archive = join(await freshDir("many-out"), "many.zip");
    const exported = await skIn(many, "export", ...files, "-o", archive);
    expect(exported.code).toBe(0);
    const quarters = (what: string) => [15, 30, 45, 60].map((n) => `sessionkit: export: ${n}/60 ${what}\n`).join("");
    expect(exported.stderr).toBe(quarters("sessions read") + quarters("members written"));

    const imported = await skIn(await freshDir("many-root"), "import", archive);
    expect(imported.code).toBe(0);
    const lines = imported.stderr.trimEnd().split("\n");
    const phase = (what: string) => lines.filter((line) => line.endsWith(` ${what}`)).map((line) => /(\d+)\/(\d+)/.exec(line)!.slice(1).map(Number));
    for (const what of ["members verified", "files written"]) {
      const counts = phase(what);
      expect(counts).toHaveLength(4);
      expect(counts.at(-1)![0]).toBe(counts.at(-1)![1]);
    }
    expect(lines).toHaveLength(8);
  });
});

describe("usage and errors", () => {
  it("bad usage: one line with a pointer to --help on stderr, exit 2", async () => {
    const cases = [
      [["export", "x"], "export needs -o FILE (the archive to write)"],
      [["export", "-o", "out.zip"], "export needs a session file or id prefix"],
      [["export", "a", "b", "--leaf", "x", "-o", "out.zip"], "--leaf applies to a single session, got 2"],
      [["import"], "import needs an archive, a session file or a directory"],
      [["import", "a.zip", "b.zip"], "import takes one argument, got 2"],
      [["import", "a.zip", "--on-conflict", "merge"], '--on-conflict must be auto, skip, replace or fork (got "merge")'],
      [["import", "a.zip", "--no-blobs"], "import does not take --no-blobs"],
      [["ls", "--dry-run"], "ls does not take --dry-run"],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => cli([...args])));
    for (const [i, result] of results.entries()) {
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`sessionkit: ${cases[i]![1]} (see sessionkit --help)\n`);
    }
  });

  it("--help describes export, import and verify of archives, and the exit codes", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const text of ["  export <session>... -o FILE", "--leaf ID", "--no-blobs", "  import <archive.zip|file.jsonl|dir>", "--on-conflict POLICY", "--dry-run", "verify <session|archive.zip>", "invalid writes nothing and exits 3", "3  invalid:"]) {
      expect(help.stdout).toContain(text);
    }
  });

  it("a missing source or id (exit 1), -o onto a session (2), -o in a missing dir (4): one line naming it", async () => {
    const missing = join(tmp, "nope.zip");
    expect(await sk("import", missing)).toMatchObject({ code: 1, stdout: "", stderr: `sessionkit: import: ${missing}: no such file or directory\n` });
    expect(await cli(["verify", missing])).toMatchObject({ code: 1, stderr: `sessionkit: verify: ${missing}: no such file\n` });
    const unknown = await sk("export", "zzzz", "-o", join(tmp, "unknown.zip"));
    expect(unknown).toMatchObject({ code: 1, stderr: `sessionkit: export: ${join(process.cwd(), "zzzz")}: no such file, and no session id in ${root} starts with "zzzz"\n` });
    const dir = await freshDir("self");
    const session = join(dir, "session.jsonl");
    await copyFile(fileOf("custom"), session);
    const self = await sk("export", session, "-o", session, "--force");
    expect(self).toMatchObject({ code: 2, stderr: `sessionkit: export: ${session} is ${session}, a session being exported: -o must name another file\n` });
    expect(await readFile(session)).toEqual(await readFile(fileOf("custom")));
    expect(await readdir(dir)).toEqual(["session.jsonl"]);
    const noDir = join(tmp, "no-such-dir", "out.zip");
    expect(await sk("export", sample("custom").id, "-o", noDir)).toMatchObject({ code: 4, stderr: `sessionkit: export: ${noDir}: cannot write it (${dirname(noDir)} is not a directory)\n` });
  });
});
