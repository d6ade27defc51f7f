/**
 * The corpus: 23 real session files with what pi 0.73.1 computes for each (pi-reference.json).
 * Every figure is a contract, except that we recover the two glued lines pi drops.
 */
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { encodeJsonl, readSessionFile, SessionManager, type SessionTreeNode } from "../../src/index.js";
import { CORPUS_DIR, GLUED_FILES, loadPiReference, type PiReference } from "../shared/corpus.js";

const reference = loadPiReference();
const files = Object.keys(reference.files);

let root: string;
let storage: ReturnType<typeof nodeFsStorage>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-corpus-"));
  await cp(CORPUS_DIR, root, { recursive: true });
  storage = nodeFsStorage({ root });
});

afterAll(async () => {
  await storage.close?.();
  await rm(root, { recursive: true, force: true });
});

function countNodes(nodes: SessionTreeNode[]): number {
  let n = 0;
  const stack = [...nodes];
  while (stack.length) {
    const node = stack.pop()!;
    n++;
    stack.push(...node.children);
  }
  return n;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

/** What we compute, in the shape of pi-reference.json. */
async function observe(file: string): Promise<PiReference> {
  const sm = await SessionManager.open(storage, file);
  const entries = sm.getEntries();
  const context = sm.buildSessionContext();
  const dir = file.slice(0, file.lastIndexOf("/"));
  const infos = await SessionManager.list(storage, "", { sessionDir: dir });
  const info = infos.find((i) => i.path === file);
  const observed: PiReference = {
    headerVersion: sm.getHeader()!.version!,
    entries: entries.length,
    entryTypes: countBy(entries, (e) => e.type),
    leafType: sm.getLeafEntry()?.type ?? null,
    treeRoots: sm.getTree().length,
    treeNodes: countNodes(sm.getTree()),
    branchLength: sm.getBranch().length,
    context: {
      messages: context.messages.length,
      roles: countBy(context.messages, (m) => m.role),
      thinkingLevel: context.thinkingLevel,
      model: JSON.parse(JSON.stringify(context.model)),
    },
    sessionName: sm.getSessionName() ?? null,
    listInfo: info && {
      messageCount: info.messageCount,
      // pi-reference.json keeps the first 80 characters of firstMessage.
      firstMessage: info.firstMessage.slice(0, 80),
      name: info.name ?? null,
      cwd: info.cwd,
    },
  };
  await sm.close();
  return observed;
}

describe("corpus: every real session file matches pi", () => {
  for (const file of files.filter((f) => !GLUED_FILES.has(f))) {
    it(file, async () => {
      const expected = reference.files[file]!;
      const observed = await observe(file);
      expect(observed.listInfo, "listed").toBeDefined();
      // The figures pi computed; key order of the count maps does not matter.
      expect(observed).toEqual(expected);
    });
  }
});

describe("corpus: glued lines are recovered where pi drops them", () => {
  for (const file of GLUED_FILES) {
    it(file, async () => {
      const expected = reference.files[file]!;
      const loaded = await readSessionFile(storage, file);
      expect(loaded.kind).toBe("session");
      if (loaded.kind !== "session") return;
      const glued = loaded.problems.filter((p) => p.kind === "glued");
      expect(glued).toHaveLength(1);
      const observed = await observe(file);
      // pi drops the one glued line: both objects on it are extra here.
      expect(observed.entries).toBe(expected.entries + 2);
      for (const [type, count] of Object.entries(expected.entryTypes)) {
        expect(observed.entryTypes[type], type).toBeGreaterThanOrEqual(count);
      }
      expect(observed.treeRoots).toBe(1);
      expect(observed.context.thinkingLevel).toBe(expected.context.thinkingLevel);
      expect(observed.context.model).toEqual(expected.context.model);
      expect(observed.listInfo!.cwd).toBe(expected.listInfo!.cwd);
      expect(observed.listInfo!.firstMessage).toBe(expected.listInfo!.firstMessage);
      expect(observed.listInfo!.messageCount).toBeGreaterThan(expected.listInfo!.messageCount);
    });
  }
});

describe("corpus: bytes", () => {
  it("a v3 file loaded and serialized again gives back the same bytes", async () => {
    let checked = 0;
    for (const file of files) {
      const original = await readFile(join(CORPUS_DIR, file));
      const firstLine = JSON.parse(original.subarray(0, original.indexOf(10)).toString("utf8"));
      if (firstLine.version !== 3) continue;
      const loaded = await readSessionFile(nodeFsStorage({ root: CORPUS_DIR }), file);
      if (loaded.kind !== "session" || loaded.problems.length > 0) continue;
      const bytes = encodeJsonl([loaded.header, ...loaded.entries]);
      expect(createHash("sha256").update(bytes).digest("hex"), file).toBe(createHash("sha256").update(original).digest("hex"));
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it("opening read-only migrates in memory and leaves the file untouched", async () => {
    const file = "badlogic__pi-mono/large-session.jsonl"; // v1
    const path = join(CORPUS_DIR, file);
    const before = createHash("sha256").update(await readFile(path)).digest("hex");
    const sm = await SessionManager.open(nodeFsStorage({ root: CORPUS_DIR }), file, { readOnly: true });
    expect(sm.getHeader()!.version).toBe(3);
    expect(sm.getEntries().every((e) => typeof e.id === "string" && e.id.length === 8)).toBe(true);
    expect(() => sm.appendMessage({ role: "user", content: "x" })).toThrow(/read-only/);
    await sm.close();
    expect(createHash("sha256").update(await readFile(path)).digest("hex")).toBe(before);
  });
});
