/**
 * The `sessionkit` CLI as a real child process, over a sample store built by
 * scripts/build-samples.ts in a temp dir and over copies of corpus files. Every --json output is
 * compared with what the library's API returns for the same file.
 * The CLI runs bundled (test/shared/cli-runner.ts).
 */
import { createHash } from "node:crypto";
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { buildSamples, LEGACY_SOURCE, type SampleSession, type SampleStore } from "../../scripts/build-samples.js";
import { stringifyJson, writeJson } from "../../cli/json.js";
import { base64ToBytes } from "../../src/blobs/base64.js";
import { buildSessionContext, SessionManager, type SessionInfo, type SessionTreeNode } from "../../src/index.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { bundleCli, REPO, runCli, type CliOptions, type CliResult } from "../shared/cli-runner.js";
import { CORPUS_DIR } from "../shared/corpus.js";

const cli = (args: string[], options?: CliOptions): Promise<CliResult> => runCli(cliBundle, args, options);

/** `cli` with --root of the sample store. */
const sk = (...args: string[]) => cli(["--root", root, ...args]);

const toJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

interface ListedSession {
  path: string;
  id: string;
  modified: string;
}

/** The API's listing of the sample store as the CLI prints it: absolute paths, the agent and the store. */
function asListed(api: SessionInfo[], storeRoot = root, agent = "pi"): unknown {
  return toJson(api.map((info) => ({ ...info, path: join(storeRoot, info.path), agent, store: storeRoot })));
}

/**
 * A listing as printed equals the API's listing: most recently modified first, the same infos.
 * Sessions modified in the same millisecond (a fork and its source) may come in either order:
 * the library lists files concurrently.
 */
function expectSameListing(printed: string, api: SessionInfo[]): void {
  const listed = JSON.parse(printed) as ListedSession[];
  const modified = listed.map((info) => Date.parse(info.modified));
  expect(modified).toEqual([...modified].sort((a, b) => b - a));
  const byPath = (infos: ListedSession[]) => [...infos].sort((a, b) => a.path.localeCompare(b.path));
  expect(byPath(listed)).toEqual(byPath(asListed(api) as ListedSession[]));
}

const sha256 = async (file: string) => createHash("sha256").update(await readFile(file)).digest("hex");

/** Every file below `dir` with its sha256: a snapshot to compare before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const file = join(dir, name);
    if ((await stat(file)).isFile()) out[name] = await sha256(file);
  }
  return out;
}

let tmp: string;
let cliBundle: string;
let root: string;
let store: SampleStore;
let storage: ReturnType<typeof nodeFsStorage>;
/** A writable copy of the corpus directory. */
let corpusCopy: string;

const sample = (kind: SampleSession["kind"]) => store.sessions.find((s) => s.kind === kind)!;
const fileOf = (kind: SampleSession["kind"]) => join(root, sample(kind).path);
const openSample = (kind: SampleSession["kind"]) => SessionManager.open(storage, sample(kind).path, { readOnly: true });

/** A file outside any store, opened as the CLI opens it: through its own directory. */
async function openLoose(file: string): Promise<SessionManager> {
  return SessionManager.open(nodeFsStorage({ root: dirname(file) }), basename(file), { readOnly: true });
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sessionkit-cli-"));
  cliBundle = await bundleCli(tmp);
  root = join(tmp, "store");
  store = await buildSamples(root);
  storage = nodeFsStorage({ root });
  corpusCopy = join(tmp, "corpus");
  await cp(CORPUS_DIR, corpusCopy, { recursive: true });
  // The corpus is read-only; the copies must be writable like any user's files.
  for (const name of await readdir(corpusCopy, { recursive: true })) await chmod(join(corpusCopy, name), (await stat(join(corpusCopy, name))).isDirectory() ? 0o755 : 0o644);
});

afterAll(async () => {
  await storage?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("the sample store", () => {
  it("holds every kind of session, built by the library, with images in blobs/", async () => {
    expect(store.sessions.map((s) => s.kind).sort()).toEqual(["branching", "compaction", "custom", "fork", "images", "large", "legacy-v1", "omp"]);
    expect(store.blobs).toBe(2);
    expect(sample("large").bytes).toBeGreaterThan(5_000_000);
    expect(sample("large").entries).toBeGreaterThan(5000);
    expect(await sha256(fileOf("legacy-v1"))).toBe(await sha256(LEGACY_SOURCE));
    const fork = await openSample("fork");
    expect(fork.getHeader()!.parentSession).toBe(sample("branching").path);
    const omp = await openSample("omp");
    expect(omp.getEntries().map((e) => e.type)).toEqual(expect.arrayContaining(["session_init", "ttsr_injection", "mode_change", "compaction"]));
    expect(omp.buildSessionContext().omp?.models).toEqual({ default: "anthropic/claude-sonnet-4-5", smol: "ollama/qwen3-coder" });
  });
});

describe("ls", () => {
  it("--all --json prints SessionManager.listAll of the root", async () => {
    const result = await sk("ls", "--all", "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expectSameListing(result.stdout, await SessionManager.listAll(storage));
    expect((JSON.parse(result.stdout) as ListedSession[]).map((info) => info.id).sort()).toEqual(store.sessions.map((s) => s.id).sort());
  });

  it("--cwd lists that project only; without it, the process's cwd", async () => {
    const project = join(tmp, "project");
    await mkdir(project);
    const sm = await SessionManager.create(storage, project, { deferUntilAssistant: false });
    sm.appendMessage({ role: "user", content: "a session of the directory the CLI runs in", timestamp: Date.now() });
    await sm.close();
    const [webapp, here] = await Promise.all([sk("ls", "--cwd", "/home/demo/webapp", "--json"), cli(["--root", root, "ls", "--json"], { cwd: project })]);
    expect(webapp.code).toBe(0);
    expectSameListing(webapp.stdout, await SessionManager.list(storage, "/home/demo/webapp"));
    expect(JSON.parse(webapp.stdout)).toHaveLength(3);
    expect(here.code).toBe(0);
    expect(JSON.parse(here.stdout)).toEqual(asListed(await SessionManager.list(storage, project)));
    expect((JSON.parse(here.stdout) as Array<{ id: string }>).map((i) => i.id)).toEqual([sm.getSessionId()]);
    await rm(join(root, sm.getSessionFile()!));
  });

  it("prints a table: modified, messages, agent, a distinct id prefix, name or first message, absolute path", async () => {
    const result = await sk("ls", "--all");
    // A small listing on a non-terminal stderr: no progress.
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^MODIFIED\s+MESSAGES \(ALL BRANCHES\)\s+AGENT\s+ID\s+NAME \/ FIRST MESSAGE\s+PATH$/);
    expect(lines.at(-1)).toBe("8 sessions");
    const rows = lines.slice(1, -1);
    expect(rows.every((row) => row.split(/\s+/)[3] === "pi")).toBe(true);
    const prefixes = rows.map((row) => row.split(/\s+/)[4]!);
    expect(new Set(prefixes).size).toBe(8);
    for (const session of store.sessions) {
      const row = rows.find((r) => r.endsWith(join(root, session.path)))!;
      expect(row).toBeDefined();
      expect(session.id.startsWith(row.split(/\s+/)[4]!)).toBe(true);
    }
    expect(rows.find((r) => r.includes(fileOf("branching")))).toContain("Fix the login redirect");
    expect(rows.find((r) => r.includes(fileOf("custom")))).toContain("Summarize yesterday's notes in three bullets.");
  });

  it("reports progress on stderr for a large listing", async () => {
    const many = join(tmp, "many");
    await mkdir(join(many, "sessions/--many--"), { recursive: true });
    for (let i = 0; i < 60; i++) await copyFile(fileOf("custom"), join(many, `sessions/--many--/s${i}.jsonl`));
    const large = await cli(["--root", many, "ls", "--all", "--json"]);
    expect(large.code).toBe(0);
    expect(JSON.parse(large.stdout)).toHaveLength(60);
    // Not a terminal: a plain line at each quarter.
    expect(large.stderr).toBe([15, 30, 45, 60].map((n) => `sessionkit: ls: ${n}/60 session files read\n`).join(""));
  });

  it("takes pi's store from $PI_CODING_AGENT_DIR, as pi does", async () => {
    const home = join(tmp, "empty-home");
    await mkdir(home, { recursive: true });
    const result = await cli(["ls", "--all", "--json"], { env: { PI_CODING_AGENT_DIR: root, HOME: home } });
    expect(result.code).toBe(0);
    expectSameListing(result.stdout, await SessionManager.listAll(storage));
  });

  it("fails with exit 1 (not found) when the root does not exist", async () => {
    const missing = join(tmp, "no-such-root");
    const result = await cli(["--root", missing, "ls", "--all"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`sessionkit: ls: ${missing}: no such directory (the storage root; set it with --root)\n`);
  });
});

describe("show", () => {
  it("finds a session by id prefix and prints header, name, leaf and the context as text", async () => {
    const images = sample("images");
    const sm = await openSample("images");
    const result = await sk("show", images.id.slice(0, 20));
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const out = result.stdout;
    expect(out).toContain(`session  ${images.id}\n`);
    expect(out).toContain(`file     ${fileOf("images")}\n`);
    expect(out).toContain("name     Progress bar in narrow terminals\n");
    expect(out).toContain(`leaf     ${sm.getLeafId()} · session name "Progress bar in narrow terminals"`);
    expect(out).toContain("context  7 messages in context · thinking off · model anthropic/claude-sonnet-4-5\n");
    expect(out).toContain("── user ──\nThe progress bar renders on two lines in narrow terminals, see the screenshot.\n");
    expect(out).toContain('→ read({"path":"docs/layout.png"})');
    expect(out).toContain("── tool result · read ──\nRead image file [image/png]\n");
    expect(out).toContain("── custom · screenshot-check ──");
    expect(out).toContain("[thinking] Compare with the layout diagram in the docs.");
    // Every image of the context, with its decoded size.
    const sizes: number[] = [];
    for (const message of sm.buildSessionContext().messages) {
      for (const block of Array.isArray(message.content) ? (message.content as Array<{ type: string; data?: string }>) : []) {
        if (block.type === "image") sizes.push(base64ToBytes(block.data!)!.length);
      }
    }
    expect(sizes).toHaveLength(4);
    const blobSizes = await Promise.all((await readdir(join(root, "blobs"))).map(async (name) => (await stat(join(root, "blobs", name))).size));
    expect(sizes.filter((size) => blobSizes.includes(size))).toHaveLength(3);
    for (const size of sizes) expect(out).toContain(`[image image/png, ${size} bytes]`);
  });

  it("--json prints the header, name, leaf id and context the API returns", async () => {
    const result = await sk("show", fileOf("branching"), "--json");
    expect(result.code).toBe(0);
    const sm = await openSample("branching");
    expect(JSON.parse(result.stdout)).toEqual(
      toJson({ file: fileOf("branching"), agent: "pi", store: root, dialect: "pi", header: sm.getHeader(), name: sm.getSessionName(), leafId: sm.getLeafId(), context: sm.buildSessionContext() }),
    );
  });

  it("an ambiguous id prefix is an error that lists every candidate", async () => {
    const ids = store.sessions.map((s) => s.id);
    const prefix = ids[0]!.slice(0, 4);
    const matching = ids.filter((id) => id.startsWith(prefix));
    expect(matching.length).toBeGreaterThan(1); // UUIDv7 ids made in one run share their time prefix
    const result = await sk("show", prefix);
    expect(result.code).toBe(2);
    const [first, ...candidates] = result.stderr.trimEnd().split("\n");
    expect(first).toBe(`sessionkit: show: session id prefix "${prefix}" is ambiguous: ${matching.length} sessions in ${root} match`);
    expect(candidates).toHaveLength(matching.length);
    for (const id of matching) expect(candidates.some((line) => line.includes(id))).toBe(true);
  });

  it("neither a file nor a known id prefix is an error naming both", async () => {
    const result = await sk("show", "zzzz");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`sessionkit: show: ${join(REPO, "zzzz")}: no such file, and no session id in ${root} starts with "zzzz"\n`);
  });
});

describe("context", () => {
  it("--json is buildSessionContext with images resolved from the root's blobs", async () => {
    const result = await sk("context", fileOf("images"), "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const sm = await openSample("images");
    expect(JSON.parse(result.stdout)).toEqual(toJson(sm.buildSessionContext()));
    expect(result.stdout).not.toContain("blob:sha256:");
    const onDisk = await readFile(fileOf("images"), "utf8");
    const refs = [...onDisk.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((m) => m[1]!);
    expect(new Set(refs).size).toBe(2);
    const screenshot = (JSON.parse(result.stdout).messages[0].content as Array<{ type: string; data: string }>)[1]!;
    expect(refs).toContain(await sha256Hex(base64ToBytes(screenshot.data)!));
  });

  it("--leaf ID is the free function buildSessionContext(entries, ID)", async () => {
    const sm = await openSample("branching");
    const optionB = sm.getEntries().find((entry) => sm.getLabel(entry.id) === "option-b")!;
    const [result, text] = await Promise.all([
      sk("context", fileOf("branching"), "--leaf", optionB.id, "--json"),
      sk("context", fileOf("branching"), "--leaf", optionB.id),
    ]);
    expect(result.code).toBe(0);
    const expected = toJson(buildSessionContext(sm.getEntries(), optionB.id));
    expect(JSON.parse(result.stdout)).toEqual(expected);
    expect(expected).not.toEqual(toJson(sm.buildSessionContext()));
    expect(text.stdout.split("\n")[0]).toBe(`context of ${fileOf("branching")} at ${optionB.id} · 8 messages in context · thinking medium · model anthropic/claude-sonnet-4-5`);
    expect(text.stdout).toContain("── user ──\nActually, try option B: pass it as a query parameter.\n");
    expect(text.stdout).not.toContain("Let's go with option A after all");
  });

  it("an unknown --leaf is an error naming the entry and the file", async () => {
    const result = await sk("context", fileOf("branching"), "--leaf", "nonesuch");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`sessionkit: context: entry nonesuch is not in ${fileOf("branching")}\n`);
  });

  it("a file in pi's layout outside --root still resolves its blobs through its agent dir", async () => {
    const elsewhere = join(tmp, "empty-root");
    await mkdir(elsewhere);
    const result = await cli(["--root", elsewhere, "context", fileOf("images"), "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(toJson((await openSample("images")).buildSessionContext()));
  });

  const corpusFiles = [
    "badlogic__pi-mono/compact.jsonl", // v1: compactions by index, inline images, a glued last line
    "twKrash__pi-session-inspector/branching.jsonl", // branches, an unknown entry type
    "hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl", // v3, inline images
  ];
  it.each(corpusFiles)("context --json and tree --json of corpus %s equal the API's", async (name) => {
    const file = join(corpusCopy, name);
    const [context, tree] = await Promise.all([sk("context", file, "--json"), sk("tree", file, "--json")]);
    expect(context.code).toBe(0);
    expect(tree.code).toBe(0);
    // What the loader recovered is reported on stderr, away from the JSON.
    const warning = name === "badlogic__pi-mono/compact.jsonl" ? `sessionkit: context: ${file}: line 1013: 2 JSON objects glued on one line (recovered 2)\n` : "";
    expect(context.stderr).toBe(warning);
    const sm = await openLoose(file);
    expect(JSON.parse(context.stdout)).toEqual(toJson(sm.buildSessionContext()));
    const isV1 = JSON.parse((await readFile(file, "utf8")).slice(0, 4096).split("\n")[0]!).version === undefined;
    if (isV1) {
      // Migration gives a v1 file's entries fresh random ids at every load: compare with ids renamed.
      expect(flattenTree(JSON.parse(tree.stdout), true)).toEqual(flattenTree(sm.getTree(), true));
    } else {
      expect(tree.stdout).toBe(`${JSON.stringify(sm.getTree())}\n`);
    }
  });
});

/**
 * Pre-order list of nodes, each as its JSON with `children` replaced by their count; with
 * `renameIds`, the ids in an entry's id fields become the pre-order number of their entry.
 * Self-contained: it also runs in a worker, from its source text.
 */
function flattenTree(roots: readonly SessionTreeNode[], renameIds = false): string[] {
  const nodes: SessionTreeNode[] = [];
  const stack = [...roots].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    nodes.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  const names = new Map(nodes.map((node, i) => [node.entry.id, `#${i}`]));
  return nodes.map((node) => {
    const entry: Record<string, unknown> = { ...node.entry };
    if (renameIds) {
      for (const key of ["id", "parentId", "firstKeptEntryId", "targetId", "fromId"]) {
        const value = entry[key];
        if (typeof value === "string" && names.has(value)) entry[key] = names.get(value);
      }
    }
    return JSON.stringify({ ...node, entry, children: node.children.length });
  });
}

/** Parses JSON too deep for this thread's stack in a worker with a large one, and flattens it. */
function parseDeepTreeInWorker(text: string): Promise<string[]> {
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const roots = JSON.parse(workerData);
    ${flattenTree.toString()}
    parentPort.postMessage(flattenTree(roots));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: text, resourceLimits: { stackSizeMb: 256 } });
    worker.once("message", (flat: string[]) => {
      resolve(flat);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

describe("tree", () => {
  it("--json is getTree() exactly", async () => {
    const result = await sk("tree", fileOf("branching"), "--json");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${JSON.stringify((await openSample("branching")).getTree())}\n`);
  });

  it("--json of a chain thousands of entries deep (beyond JSON.stringify's stack) is still getTree()", async () => {
    const sm = await openSample("large");
    const roots = sm.getTree();
    expect(() => JSON.stringify(roots)).toThrow(RangeError);
    const result = await sk("tree", fileOf("large"), "--json");
    expect(result.code).toBe(0);
    expect(await parseDeepTreeInWorker(result.stdout)).toEqual(flattenTree(roots));
  });

  it("prints branches, labels and the leaf marker; a deep chain prints one line per entry", async () => {
    const sm = await openSample("branching");
    const result = await sk("tree", fileOf("branching"));
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${fileOf("branching")}: 27 entries, leaf ${sm.getLeafId()}`);
    expect(lines).toHaveLength(1 + 27);
    const diagnosis = sm.getEntries().find((entry) => sm.getLabel(entry.id) === "diagnosis")!;
    expect(lines.find((line) => line.startsWith(diagnosis.id))).toMatch(/^\w{8} assistant: `handleLogin` always redirects.* \[diagnosis\]$/);
    // The three children of the diagnosis: its label entry, option B, and the branch summary.
    expect(lines.filter((line) => /^(├─|└─) /.test(line))).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith("└─ "))[0]).toMatch(/branch summary: Tried option B/);
    expect(lines.filter((line) => line.includes("← leaf"))).toEqual([`   ${sm.getLeafId()} session name "Fix the login redirect"  ← leaf`]);

    const large = await sk("tree", fileOf("large"));
    expect(large.stdout.trimEnd().split("\n")).toHaveLength(1 + sample("large").entries);
  });
});

describe("verify", () => {
  it("a clean file passes with exit 0", async () => {
    const result = await sk("verify", fileOf("branching"));
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: `${fileOf("branching")}: OK (v3, 27 entries, 0 blob refs)\n` });
  });

  it("lists every problem of a damaged file with its line, and exits 3 (invalid)", async () => {
    // A store of its own: the images session, one of its two blobs deleted, the file damaged.
    const damagedRoot = join(tmp, "damaged");
    await cp(root, damagedRoot, { recursive: true });
    const file = join(damagedRoot, sample("images").path);
    expect((await openSample("images")).getEntries().map((e) => e.type)).toEqual([
      "message", "message", "message", "message", "message", "message", "custom_message", "custom", "session_info",
    ]);
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    const screenshotRef = /blob:sha256:([0-9a-f]{64})/.exec(lines[1]!)![1]!;
    await rm(join(damagedRoot, "blobs", screenshotRef));
    const entries = lines.slice(1).map((line) => JSON.parse(line) as { id: string; parentId: string | null; type: string });
    const orphan = entries[3]!;
    lines[4] = JSON.stringify({ ...orphan, parentId: "0badf00d" });
    const invalid = entries[5]!;
    lines[6] = JSON.stringify({ ...invalid, message: "not an object" });
    lines.splice(3, 0, "this line is not JSON");
    lines.push(JSON.stringify(entries[1]));
    await writeFile(file, `${lines.join("\n")}\n{"type":"message","id":"torn`);
    // Line numbers in the damaged file (1-based; the header is line 1).
    const screenshotLines = lines.flatMap((line, i) => (line.includes(screenshotRef) ? [i + 1] : []));

    const result = await cli(["--root", damagedRoot, "verify", file]);
    expect(result.code).toBe(3);
    const report = result.stdout.trimEnd().split("\n");
    expect(report[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: 8 problems \\(v3, 9 entries, 2 blob refs\\)$`));
    expect(report.slice(1)).toEqual([
      `  line ${screenshotLines[0]}, entry ${entries[0]!.id}: missing-blob: blob:sha256:${screenshotRef}: ${join(damagedRoot, "blobs", screenshotRef)} does not exist`,
      expect.stringMatching(/^ {2}line 4: bad-line: not JSON/),
      `  line 6, entry ${orphan.id}: dangling-parent: parent 0badf00d is not in the file`,
      expect.stringMatching(new RegExp(`^ {2}line 8, entry ${invalid.id}: invalid-entry: message: message: `)),
      // The invalid entry is left out on load, so its child's parent is gone.
      `  line 9, entry ${entries[6]!.id}: dangling-parent: parent ${invalid.id} is not in the file`,
      `  line ${screenshotLines[1]}, entry ${entries[6]!.id}: missing-blob: blob:sha256:${screenshotRef}: ${join(damagedRoot, "blobs", screenshotRef)} does not exist`,
      `  line ${lines.length}, entry ${entries[1]!.id}: duplicate-id: id ${entries[1]!.id} is already used by the entry on line 3`,
      expect.stringMatching(new RegExp(`^ {2}line ${lines.length + 1}: torn-tail: incomplete last line`)),
    ]);

    const json = await cli(["--root", damagedRoot, "verify", file, "--json"]);
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout) as { problems: Array<{ kind: string; line: number; entryId?: string }> };
    expect(parsed).toMatchObject({ file, version: 3, migratesTo: null, entries: 9, blobRefs: 2 });
    expect(parsed.problems.map((p) => [p.kind, p.line, p.entryId])).toEqual([
      ["missing-blob", screenshotLines[0], entries[0]!.id],
      ["bad-line", 4, undefined],
      ["dangling-parent", 6, orphan.id],
      ["invalid-entry", 8, invalid.id],
      ["dangling-parent", 9, entries[6]!.id],
      ["missing-blob", screenshotLines[1], entries[6]!.id],
      ["duplicate-id", lines.length, entries[1]!.id],
      ["torn-tail", lines.length + 1, undefined],
    ]);
  });
});

describe("migrate", () => {
  it("rewrites a v1 file as v3 in place, says so, and leaves no backup or lock behind", async () => {
    const dir = join(tmp, "migrate");
    await mkdir(dir);
    const file = join(dir, "legacy.jsonl");
    await copyFile(LEGACY_SOURCE, file);
    await chmod(file, 0o644); // copyFile keeps the corpus's read-only mode
    const before = await sk("context", file, "--json");
    expect(before.code).toBe(0);

    const result = await sk("migrate", file);
    expect(result).toMatchObject({ code: 0, stdout: `${file}: migrated v1 → v3 (1018 entries)\n` });
    expect(await readdir(dir)).toEqual(["legacy.jsonl"]);
    const header = JSON.parse((await readFile(file, "utf8")).split("\n")[0]!);
    expect(header.version).toBe(3);
    expect((await openLoose(file)).getEntries().every((entry) => typeof entry.id === "string" && entry.parentId !== undefined)).toBe(true);
    // A migration loses nothing: no truncation, pi's streaming leftovers such as partialJson stay.
    expect(JSON.parse((await sk("context", file, "--json")).stdout)).toEqual(JSON.parse(before.stdout));

    const digest = await sha256(file);
    const again = await sk("migrate", file, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ file, dialect: "pi", fromVersion: 3, toVersion: 3, migrated: false });
    expect(await sha256(file)).toBe(digest);
  });

  it("refuses a write-protected file", async () => {
    const file = join(tmp, "protected.jsonl");
    await copyFile(LEGACY_SOURCE, file);
    await chmod(file, 0o444);
    const result = await sk("migrate", file);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`sessionkit: migrate: ${file} is write-protected: not migrating it (v1)\n`);
    expect(await sha256(file)).toBe(await sha256(LEGACY_SOURCE));
  });
});

describe("file arguments are read in place and never modified", () => {
  it("show, context, tree and verify leave a v1 file, its directory and the store untouched", async () => {
    const dir = join(tmp, "untouched");
    await mkdir(dir);
    await copyFile(LEGACY_SOURCE, join(dir, "legacy.jsonl"));
    await chmod(join(dir, "legacy.jsonl"), 0o644); // writable, as a user's own file is
    const beforeDir = await snapshot(dir);
    const beforeRoot = await snapshot(root);
    const legacy = join(dir, "legacy.jsonl");
    const runs = await Promise.all([
      cli(["--root", root, "show", "legacy.jsonl"], { cwd: dir }),
      cli(["--root", root, "context", "legacy.jsonl", "--json"], { cwd: dir }),
      sk("tree", legacy, "--json"),
      sk("verify", legacy),
      sk("show", fileOf("images")),
      sk("context", fileOf("legacy-v1")),
      sk("tree", fileOf("omp")),
      sk("verify", fileOf("images"), "--json"),
    ]);
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(await snapshot(dir)).toEqual(beforeDir);
    expect(await snapshot(root)).toEqual(beforeRoot);
    expect(beforeDir["legacy.jsonl"]).toBe(await sha256(LEGACY_SOURCE));
    // The v1 file was migrated in memory only: its context is the API's over the same bytes.
    expect(JSON.parse(runs[1]!.stdout)).toEqual(toJson((await openLoose(legacy)).buildSessionContext()));
    expect(runs[3]!.stdout).toBe(`${legacy}: OK (v1, migrates to v3 on load, 1018 entries, 0 blob refs)\n`);
  });
});

describe("session arguments", () => {
  it("context, tree, verify and migrate take the id prefix ls prints, as show and export do", async () => {
    const branching = sample("branching");
    const prefix = branching.id.slice(0, 13);
    const byFile = await Promise.all(["context", "tree", "verify"].map((command) => sk(command, fileOf("branching"), "--json")));
    const byId = await Promise.all(["context", "tree", "verify"].map((command) => sk(command, prefix, "--json")));
    for (const [i, result] of byId.entries()) {
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout).toBe(byFile[i]!.stdout);
    }
    const migrated = await sk("migrate", prefix, "--json");
    expect(migrated).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(migrated.stdout)).toEqual({ file: fileOf("branching"), dialect: "pi", fromVersion: 3, toVersion: 3, migrated: false });
  });

  it("an id prefix that matches nothing names the root it looked in, for every session command", async () => {
    for (const command of ["show", "context", "tree", "verify", "migrate"]) {
      const result = await sk(command, "ffffffff");
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`sessionkit: ${command}: ${join(REPO, "ffffffff")}: no such file, and no session id in ${root} starts with "ffffffff"\n`);
    }
  });
});

describe("errors", () => {
  it("a file that is not a session: one line naming the file, exit 3 (invalid) for every command, the file untouched", async () => {
    const file = join(tmp, "not-a-session.jsonl");
    const text = `${JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "hi" } })}\n`;
    await writeFile(file, text);
    for (const command of ["show", "verify", "migrate"]) {
      const result = await sk(command, file);
      expect(result.code).toBe(3);
      expect(result.stderr).toBe(`sessionkit: ${command}: ${file} is not a session file: first record has type "message" (expected {"type":"session","id":…} or the Python agent's {"type":"session_header","id":…})\n`);
      expect(result.stdout).toBe("");
    }
    expect(await readFile(file, "utf8")).toBe(text);
  });

  it("a missing (exit 1) or empty (exit 3) file: one line naming it (relative paths resolved against the cwd)", async () => {
    const missing = await cli(["--root", root, "tree", "nope.jsonl"], { cwd: tmp });
    expect(missing).toMatchObject({ code: 1, stderr: `sessionkit: tree: ${join(tmp, "nope.jsonl")}: no such file\n` });
    const empty = join(tmp, "empty.jsonl");
    await writeFile(empty, "");
    expect(await sk("context", empty)).toMatchObject({ code: 3, stderr: `sessionkit: context: ${empty} is empty, not a session file\n` });
    expect(await readFile(empty, "utf8")).toBe("");
  });

  it("bad usage is one line on stderr with a pointer to --help, exit 2; --help prints the usage on stdout", async () => {
    for (const [args, message] of [
      [["frobnicate"], 'unknown command "frobnicate"'],
      [["ls", "--frob"], "unknown option '--frob'"],
      [["ls", "--leaf", "x"], "ls does not take --leaf"],
      [["tree"], "tree needs a session file or id prefix"],
    ] as const) {
      const result = await cli([...args]);
      expect(result).toMatchObject({ code: 2, stdout: "", stderr: `sessionkit: ${message} (see sessionkit --help)\n` });
    }
    const help = await cli(["--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: sessionkit/);
    for (const command of ["ls", "show", "context", "tree", "verify", "migrate"]) expect(help.stdout).toContain(`  ${command} `);
  });
});

describe("the JSON writer", () => {
  it("is JSON.stringify for API values and for JSON's edge cases", async () => {
    const values: unknown[] = [
      await SessionManager.listAll(storage),
      (await openSample("omp")).buildSessionContext(),
      (await openSample("branching")).getTree(),
      (await openLoose(join(corpusCopy, "twKrash__pi-session-inspector/branching.jsonl"))).getTree(),
      { a: undefined, b: () => 1, c: Symbol("s"), d: [undefined, () => 1, Symbol("s"), null], e: new Date(0), f: [Number.NaN, -0, Infinity, 1e21] },
      { text: "quote \" backslash \\ newline \n tab \t control \u0001 separators \u2028\u2029 lone \ud800 emoji 😀", "key \"x\"": 1 },
      { toJSON: (key: string) => ({ key, nested: { toJSON: () => [1, { toJSON: () => undefined }] } }) },
      [new Number(3), new String("s"), new Boolean(false), [[[]]], {}],
      "top-level string",
      42,
      null,
      undefined,
      () => 1,
      Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
    ];
    for (const value of values) expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it("hands large output over in chunks that join to JSON.stringify's text", async () => {
    const context = (await openSample("large")).buildSessionContext();
    const chunks: string[] = [];
    expect(writeJson(context, (chunk) => chunks.push(chunk))).toBe(true);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe(JSON.stringify(context));
  });
});
