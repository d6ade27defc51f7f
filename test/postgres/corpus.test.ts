/**
 * The corpus on PostgreSQL: every real session file written into a store, read back byte for
 * byte, then the same figures as pi-reference.json that the node and browser projects check.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { CORPUS_DIR, loadPiReference } from "../shared/corpus.js";
import { describeCorpusMatchesPi } from "../shared/corpus-observe.js";
import { dropSchema, freshSchema, openStorage } from "./helpers.js";

const reference = loadPiReference();
const files = Object.keys(reference.files);
const schema = freshSchema("corpus");
let storage: PostgresStorage;
const corpusBytes = new Map<string, Uint8Array>();

beforeAll(async () => {
  storage = openStorage(schema);
  for (const file of files) {
    const bytes = await readFile(join(CORPUS_DIR, file));
    corpusBytes.set(file, bytes);
    await storage.write(file, bytes);
  }
});

afterAll(async () => {
  await storage.close();
  await dropSchema(schema);
});

describe("corpus (postgres): loading", () => {
  it("every corpus file reads back byte for byte, whole and in 4 KiB ranges", async () => {
    expect(corpusBytes.size).toBe(files.length);
    for (const [file, bytes] of corpusBytes) {
      const stored = await storage.read(file);
      expect(await sha256Hex(stored!), file).toBe(await sha256Hex(bytes));
      const pieces: Uint8Array[] = [];
      for (let offset = 0; offset < bytes.length; offset += 4096) pieces.push((await storage.read(file, { offset, length: 4096 }))!);
      expect(await sha256Hex(Buffer.concat(pieces)), file).toBe(await sha256Hex(bytes));
    }
  });
});

describeCorpusMatchesPi("postgres", reference, () => storage);
