/**
 * Every corpus file: imported as a plain pi file (migrated, images moved into blobs), exported as
 * an archive to a real file, imported from that file into an empty store. The second store holds
 * the same bytes, entries, tree, context and blobs; importing again changes nothing.
 */
import { createWriteStream, openAsBlob } from "node:fs";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { exportArchive, importArchive, importSessionFiles, verifyArchive } from "../../../src/archive/index.js";
import { SessionManager, type ExportSummary, type ImportSummary } from "../../../src/index.js";
import { collectBlobRefs } from "../../../src/blobs/images.js";
import { parseBlobRef } from "../../../src/blobs/blob-store.js";
import { CORPUS_DIR, GLUED_FILES, loadPiReference } from "../../shared/corpus.js";
import { zipMembers } from "../../shared/zip-fixtures.js";
import { listing, OWN_STORE, sha256, tempStore, type TempStore } from "./helpers.js";

const reference = loadPiReference();
const corpusFiles = Object.keys(reference.files).sort();

let source: TempStore;
let target: TempStore;
let plain: ImportSummary;
let exported: ExportSummary;
let archivePath: string;
let archiveBytes: Uint8Array;
let firstImport: ImportSummary;

beforeAll(async () => {
  source = await tempStore();
  target = await tempStore();
  await cp(CORPUS_DIR, join(source.root, "corpus"), { recursive: true });
  const files = [];
  for (const file of corpusFiles) files.push({ name: file, bytes: (await source.storage.read(`corpus/${file}`))! });
  plain = await importSessionFiles(source.storage, files, OWN_STORE);
  archivePath = join(source.parent, "corpus.zip");
  exported = await exportArchive(
    source.storage,
    plain.sessions.map((s) => s.path),
    Writable.toWeb(createWriteStream(archivePath)) as WritableStream<Uint8Array>,
  );
  archiveBytes = await readFile(archivePath);
  firstImport = await importArchive(target.storage, await openAsBlob(archivePath), OWN_STORE);
});

afterAll(async () => {
  await source?.cleanup();
  await target?.cleanup();
  await terminateWorkers();
});

describe("plain pi files import", () => {
  it("every corpus file becomes a stored v3 session under its cwd, with pi's file name", async () => {
    expect(plain.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "created"));
    for (const session of plain.sessions) {
      const sm = await SessionManager.open(source.storage, session.path, { readOnly: true, resolveImages: "lazy" });
      const header = sm.getHeader()!;
      expect(header.version).toBe(3);
      expect(session.path).toBe(`sessions/--${(header.cwd ?? "").replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--/${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`);
      const expected = reference.files[session.source]!;
      const extra = GLUED_FILES.has(session.source) ? 2 : 0; // pi drops the glued line's two objects
      expect(sm.getEntries().length, session.source).toBe(expected.entries + extra);
      await sm.close();
    }
  });

  it("inline images are moved into blobs and the files hold refs", async () => {
    const withImages = ["badlogic__pi-mono/compact.jsonl", "hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl"];
    for (const name of withImages) {
      const path = plain.sessions.find((s) => s.source === name)!.path;
      const text = new TextDecoder().decode((await source.storage.read(path))!);
      expect(text, name).toContain('"data":"blob:sha256:');
    }
    const blobs = await source.storage.list("blobs");
    expect(blobs.length).toBeGreaterThan(0);
    for (const blob of blobs) expect(sha256((await source.storage.read(`blobs/${blob.name}`))!)).toBe(blob.name);
  });

  it("reports the repaired and migrated files", () => {
    for (const glued of GLUED_FILES) expect(plain.warnings.some((w) => w.startsWith(`${glued}: line`) && w.includes("glued"))).toBe(true);
    expect(plain.warnings).toContain("badlogic__pi-mono/large-session.jsonl: migrated from v1");
  });

  it("importing the same files again changes nothing (v1 files get the same ids every time)", async () => {
    const before = await listing(source.root);
    const files = [];
    for (const file of corpusFiles) files.push({ name: file, bytes: (await source.storage.read(`corpus/${file}`))! });
    const again = await importSessionFiles(source.storage, files, OWN_STORE);
    expect(again.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "skipped"));
    expect(again.blobs.written).toBe(0);
    expect(await listing(source.root)).toEqual(before);
  });
});

describe("archive round trip", () => {
  it("the archive starts with the manifest, deflates sessions and stores blobs", async () => {
    const members = await zipMembers(archiveBytes);
    expect(members[0]!.name).toBe("manifest.json");
    const manifest = JSON.parse(new TextDecoder().decode(members[0]!.data));
    expect(manifest).toMatchObject({ format: "sessionkit-archive", version: "1.0" });
    expect(manifest.sessions).toHaveLength(corpusFiles.length);
    for (const member of members.slice(1)) {
      if (member.name.startsWith("sessions/")) expect(member.level, member.name).not.toBe(0);
      else expect(member.level, member.name).toBe(0);
    }
    expect(exported.archiveBytes).toBe(archiveBytes.length);
    expect(exported.missingBlobs).toEqual([]);
  });

  it("imports every session into an empty store, byte-identical to the member and the source", async () => {
    expect(firstImport.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "created"));
    const members = new Map((await zipMembers(archiveBytes)).map((m) => [m.name, m.data]));
    for (const [i, session] of firstImport.sessions.entries()) {
      const stored = (await target.storage.read(session.path))!;
      expect(sha256(stored), session.path).toBe(sha256(members.get(session.source)!));
      expect(session.path).toBe(plain.sessions[i]!.path);
      expect(sha256(stored)).toBe(sha256((await source.storage.read(session.path))!));
    }
  });

  it("the imported sessions have the same entries, tree and context", async () => {
    for (const session of firstImport.sessions) {
      const a = await SessionManager.open(source.storage, session.path, { readOnly: true });
      const b = await SessionManager.open(target.storage, session.path, { readOnly: true });
      expect(b.getHeader()).toEqual(a.getHeader());
      expect(b.getEntries()).toEqual(a.getEntries());
      expect(b.getTree()).toEqual(a.getTree());
      // Eager image resolution: the context carries the images read back from the blobs.
      expect(b.buildSessionContext()).toEqual(a.buildSessionContext());
      await a.close();
      await b.close();
    }
  });

  it("the blobs are the referenced ones, byte-identical", async () => {
    const referenced = new Set<string>();
    for (const session of firstImport.sessions) {
      const sm = await SessionManager.open(target.storage, session.path, { readOnly: true, resolveImages: "lazy" });
      for (const entry of sm.getEntries()) for (const ref of collectBlobRefs(entry)) referenced.add(parseBlobRef(ref)!);
      await sm.close();
    }
    const stored = (await target.storage.list("blobs")).map((b) => b.name).sort();
    expect(stored).toEqual([...referenced].sort());
    expect(stored.length).toBe(exported.blobs.count);
    for (const hash of stored) expect(sha256((await target.storage.read(`blobs/${hash}`))!)).toBe(sha256((await source.storage.read(`blobs/${hash}`))!));
  });

  it("importing the same archive twice changes nothing", async () => {
    const before = await listing(target.root);
    const again = await importArchive(target.storage, archiveBytes, OWN_STORE);
    expect(again.sessions.map((s) => s.action)).toEqual(corpusFiles.map(() => "skipped"));
    expect(again.blobs).toEqual({ written: 0, present: exported.blobs.count, bytesWritten: 0 });
    expect(await listing(target.root)).toEqual(before);
  });

  it("verifyArchive describes the archive it checked", async () => {
    const summary = await verifyArchive(await openAsBlob(archivePath));
    expect(summary.ok).toBe(true);
    expect(summary.sessions.map((s) => s.id)).toEqual(exported.sessions.map((s) => s.id));
    expect(summary.blobs).toEqual(exported.blobs);
    expect(summary.blobsNotInArchive).toEqual([]);
    expect(summary.archiveBytes).toBe(archiveBytes.length);
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });
});
