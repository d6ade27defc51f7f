/**
 * The corpus in Chromium: every real session file's bytes loaded into IndexedDB and into OPFS
 * (through its worker), then the same figures as pi-reference.json that the node project checks.
 * The bytes come from the vitest server (`commands.readFile`, paths relative to the project root).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import { opfsStorage } from "../../adapters/opfs/index.js";
import { base64ToBytes } from "../../src/blobs/base64.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import type { StoragePort } from "../../src/index.js";
import { CORPUS_DIR_FROM_PROJECT_ROOT, PI_REFERENCE_NAME, describeCorpusMatchesPi, type PiReferenceFile } from "../shared/corpus-observe.js";

async function readCorpusFile(name: string, encoding: "utf8" | "base64"): Promise<string> {
  return commands.readFile(`${CORPUS_DIR_FROM_PROJECT_ROOT}/${name}`, encoding);
}

const reference: PiReferenceFile = JSON.parse(await readCorpusFile(PI_REFERENCE_NAME, "utf8"));
const files = Object.keys(reference.files);

/** Each corpus file's bytes, fetched once for every backend. */
const corpusBytes = new Map<string, Uint8Array>();
beforeAll(async () => {
  for (const file of files) {
    const bytes = base64ToBytes(await readCorpusFile(file, "base64"));
    if (!bytes) throw new Error(`${file}: the server sent invalid base64`);
    corpusBytes.set(file, bytes);
  }
});

/** Registers the corpus checks on a fresh port of one backend, loaded with every corpus file. */
function describeCorpusOn(name: string, makePort: () => StoragePort, removePort: () => Promise<void>): void {
  let storage: StoragePort;

  beforeAll(async () => {
    storage = makePort();
    for (const [file, bytes] of corpusBytes) await storage.write(file, bytes);
  });

  afterAll(removePort);

  describe(`corpus (${name}): loading`, () => {
    it("every corpus file reads back byte for byte", async () => {
      expect(corpusBytes.size).toBe(files.length);
      for (const [file, bytes] of corpusBytes) {
        const stored = await storage.read(file);
        expect(stored?.length, file).toBe(bytes.length);
        expect(await sha256Hex(stored!), file).toBe(await sha256Hex(bytes));
      }
    });
  });

  describeCorpusMatchesPi(name, reference, () => storage);
}

describe("indexeddb", () => {
  const dbName = `sessionkit-corpus-${crypto.randomUUID()}`;
  let port: ReturnType<typeof indexedDbStorage> | undefined;
  describeCorpusOn(
    "indexeddb",
    () => (port = indexedDbStorage({ dbName })),
    async () => {
      await port?.close();
      await new Promise<void>((resolve, reject) => {
        const request = indexedDB.deleteDatabase(dbName);
        request.onsuccess = () => resolve();
        request.onerror = () => reject(request.error);
      });
    },
  );
});

describe("opfs", () => {
  const root = `sessionkit-corpus-${crypto.randomUUID()}`;
  let port: ReturnType<typeof opfsStorage> | undefined;
  describeCorpusOn(
    "opfs (worker with sync access handles, through rpc)",
    () => (port = opfsStorage({ root })),
    async () => {
      await port?.close();
      await (await navigator.storage.getDirectory()).removeEntry(root, { recursive: true });
    },
  );
});
