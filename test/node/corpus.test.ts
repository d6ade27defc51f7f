/**
 * The corpus: 23 real session files with what pi 0.73.1 computes for each (pi-reference.json),
 * on a copy in a temp dir through node-fs. The browser runs the same checks (test/browser/corpus.test.ts).
 */
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { encodeJsonl, readSessionFile } from "../../src/format/session-file.js";
import { SessionManager } from "../../src/index.js";
import { CORPUS_DIR, loadPiReference } from "../shared/corpus.js";
import { describeCorpusMatchesPi, PARSE_MODES, type ParseMode } from "../shared/corpus-observe.js";

const reference = loadPiReference();
const files = Object.keys(reference.files);

/** A copy of the corpus per parse mode: opening migrates (rewrites) the old files. */
const copies = new Map<ParseMode, { root: string; storage: ReturnType<typeof nodeFsStorage> }>();

beforeAll(async () => {
  for (const parse of PARSE_MODES) {
    const root = await mkdtemp(join(tmpdir(), `sessionkit-corpus-${parse}-`));
    await cp(CORPUS_DIR, root, { recursive: true });
    copies.set(parse, { root, storage: nodeFsStorage({ root }) });
  }
});

afterAll(async () => {
  for (const { root, storage } of copies.values()) {
    await storage.close?.();
    await rm(root, { recursive: true, force: true });
  }
});

for (const parse of PARSE_MODES) describeCorpusMatchesPi("node-fs", reference, () => copies.get(parse)!.storage, parse);

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
