/**
 * Archives on PostgreSQL: every corpus file imported as a plain pi file into one store, exported
 * to a real zip on disk, imported into a second store (another schema) and into node-fs; all hold
 * the same bytes, entries and context, and importing again changes nothing.
 */
import { createWriteStream, openAsBlob } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { terminateWorkers } from "@zip.js/zip.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { exportArchive, importArchive, importSessionFiles } from "../../src/archive/index.js";
import { SessionManager, type ImportSummary, type StoragePort } from "../../src/index.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { CORPUS_DIR, loadPiReference } from "../shared/corpus.js";
import { dropSchema, freshSchema, openStorage } from "./helpers.js";

const corpusFiles = Object.keys(loadPiReference().files).sort();
const schemas = [freshSchema("arch_src"), freshSchema("arch_dst")];
let source: PostgresStorage;
let target: PostgresStorage;
let onDisk: NodeFsStorage;
let dir: string;
let plain: ImportSummary;
let imported: ImportSummary;
let archivePath: string;

beforeAll(async () => {
  [source, target] = schemas.map((schema) => openStorage(schema)) as [PostgresStorage, PostgresStorage];
  dir = await mkdtemp(join(tmpdir(), "sessionkit-pg-archive-"));
  onDisk = nodeFsStorage({ root: join(dir, "store") });
  const files = [];
  for (const file of corpusFiles) files.push({ name: file, bytes: await readFile(join(CORPUS_DIR, file)) });
  plain = await importSessionFiles(source, files);
  archivePath = join(dir, "corpus.zip");
  await exportArchive(
    source,
    plain.sessions.map((session) => session.path),
    Writable.toWeb(createWriteStream(archivePath)) as WritableStream<Uint8Array>,
  );
  imported = await importArchive(target, await openAsBlob(archivePath));
  await importArchive(onDisk, await openAsBlob(archivePath), { owner: "sessionkit" }); // a root of sessionkit's own: the same bytes
});

afterAll(async () => {
  await source?.close();
  await target?.close();
  await onDisk?.close();
  for (const schema of schemas) await dropSchema(schema);
  await rm(dir, { recursive: true, force: true });
  await terminateWorkers();
});

async function hashOf(storage: StoragePort, path: string): Promise<string> {
  return sha256Hex((await storage.read(path))!);
}

describe("archives on postgres", () => {
  it("every corpus file imports; the archive imports into another store and into node-fs with the same bytes", async () => {
    expect(plain.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "created"));
    expect(imported.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "created"));
    for (const session of plain.sessions) {
      const expected = await hashOf(source, session.path);
      expect(await hashOf(target, session.path), session.path).toBe(expected);
      expect(await hashOf(onDisk, session.path), session.path).toBe(expected);
    }
    const blobs = (await source.list("blobs")).map((entry) => entry.name);
    expect(blobs.length).toBeGreaterThan(0);
    expect((await target.list("blobs")).map((entry) => entry.name)).toEqual(blobs);
    for (const blob of blobs) expect(await hashOf(target, `blobs/${blob}`)).toBe(blob);
  });

  it("the imported sessions have the same entries, tree and context", async () => {
    for (const session of imported.sessions) {
      const a = await SessionManager.open(source, session.path, { readOnly: true });
      const b = await SessionManager.open(target, session.path, { readOnly: true });
      expect(b.getEntries()).toEqual(a.getEntries());
      expect(b.getTree()).toEqual(a.getTree());
      expect(b.buildSessionContext()).toEqual(a.buildSessionContext());
      await a.close();
      await b.close();
    }
  });

  it("importing the same archive again changes nothing", async () => {
    const again = await importArchive(target, await openAsBlob(archivePath));
    expect(again.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "skipped"));
    expect(again.blobs.written).toBe(0);
  });
});
