/**
 * A store an agent owns keeps that agent's format, through every write path (issue 20).
 *
 * The session: badlogic's compact.jsonl from the corpus, a v1 file with two compactions and three
 * PNG screenshots inline (68-84 KB of base64 each). Its one glued line is split in two first, so
 * that pi reads every entry, as we do; pi 0.73.1's own migration of that file is the v3 original.
 * The last compaction leaves the screenshots out of the context: pi's messages (every message
 * entry it loads) are compared too, and with them the images.
 *
 * - pi's store (also indusagi's, and xcsh's in oh-my-pi's layout): every file written through each
 *   path (imports of .jsonl files, a batch and zips from sessionkit's, oh-my-pi's and pi's stores;
 *   an import extending a stored session; migration; appends; rename; moveTo; fork; forkFrom;
 *   rewriteEntries; createBranchedSession; and rewrites of a file an older sessionkit left with
 *   blob refs) is read by the real pi package (@mariozechner/pi-coding-agent 0.73.1), whose context
 *   must equal its context of the original, the images byte for byte; no blob ref anywhere.
 * - oh-my-pi's store: each file follows REFERENCE.md's rules (every image of 1024 base64 characters
 *   or more is `blob:sha256:<sha256 of its bytes>`, the bytes in blobs/<hash>); resolved as
 *   oh-my-pi resolves them on load, pi reads the original's context.
 * - The Python agent's profile (seed 003): each file is its snake_case spelling with images inline,
 *   and the seed's own build_session_context (written out below from the seed) gives the
 *   original's messages.
 * - The CLI: `sessionkit import compact.jsonl` with a $HOME holding only ~/.pi/agent writes no blob
 *   and keeps the images inline; so do a folder, a zip from oh-my-pi's store, files copied out of
 *   oh-my-pi's store (their refs resolved from its blobs/) and `migrate`; an import into oh-my-pi's
 *   store writes its refs, one into a Python profile its spelling.
 */
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SessionManager as PiSessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { exportArchive, importArchive, importSessionFiles } from "../../src/archive/index.js";
import { SessionManager, type SessionContext, type SessionEntry, type SessionManagerOptions, type StoragePort } from "../../src/index.js";
import { scanJsonl } from "../../src/format/jsonl-reader.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { zipMembers } from "../shared/zip-fixtures.js";
import { memorySink } from "./archive/helpers.js";

const CORPUS_FILE = join(CORPUS_DIR, "badlogic__pi-mono/compact.jsonl");
const BLOB_REF = /^blob:sha256:([0-9a-f]{64})$/;

let tmp: string;
let copies = 0;
/** compact.jsonl with its glued line split: v1, read alike by pi and by us. */
let v1: Uint8Array;
/** pi's own migration of `v1`. */
let v3: Uint8Array;
/** pi's context of the original. */
let original: SessionContext;
/** The original's messages as pi loads them (every message entry, in file order). */
let originalMessages: unknown[];
/** The original's images, in file order. */
let originalImages: string[];
/** The original's entries as pi holds them (for the appends). */
let originalEntries: SessionEntry[];
/** Zips of the session exported from sessionkit's own store, oh-my-pi's store and pi's store. */
const zips: Record<"sessionkit" | "omp" | "pi", Uint8Array> = { sessionkit: new Uint8Array(), omp: new Uint8Array(), pi: new Uint8Array() };

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

/** Every image block's data in `value`, in order. */
function imagesOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) imagesOf(item, into);
  else if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    if (record.type === "image" && typeof record.data === "string") into.push(record.data);
    else for (const key in record) imagesOf(record[key], into);
  }
  return into;
}

/** What pi 0.73.1 reads in a session file: its context and its messages; read from a copy (pi rewrites a file it migrates). */
async function piReads(file: string): Promise<{ context: SessionContext; messages: unknown[] }> {
  const copy = join(tmp, "pi-reads", `${++copies}.jsonl`);
  await mkdir(dirname(copy), { recursive: true });
  await copyFile(file, copy);
  const pi = PiSessionManager.open(copy);
  const messages = pi.getEntries().flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
  return json({ context: pi.buildSessionContext() as unknown as SessionContext, messages });
}

interface ReadOptions {
  /** Written by SessionManager's appends: summary messages have their new entries' times. */
  replayed?: boolean;
  /** Written by SessionManager in a store with oh-my-pi's persistence limits (oh-my-pi's, xcsh's). */
  limited?: boolean;
}

/** pi reads the original's session in `file`: its context, and every message with its images byte for byte. */
async function expectPiReadsSession(file: string, options: ReadOptions = {}): Promise<void> {
  const { context, messages } = await piReads(file);
  const expected = options.limited ? withOmpLimits({ context: original, messages: originalMessages }) : { context: original, messages: originalMessages };
  expect(imagesOf(messages), `${file}: the images byte for byte`).toEqual(originalImages);
  expect(messages, file).toEqual(expected.messages);
  if (options.replayed) expect(withoutSummaryTimes(context), file).toEqual(withoutSummaryTimes(expected.context));
  else expect(context, file).toEqual(expected.context);
}

/**
 * `value` as oh-my-pi's persistence limits leave it (REFERENCE.md, "Persistence"): the keys
 * `partialJson` and `jsonlEvents` removed at any depth. (Its other limit, strings over 500,000
 * characters, does not touch this session: checked in beforeAll.)
 */
function withOmpLimits<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, item: unknown) => (key === "partialJson" || key === "jsonlEvents" ? undefined : item)) as T;
}

/** A context with the times that summary messages take from their entries left out (replayed entries are new). */
function withoutSummaryTimes(context: SessionContext): SessionContext {
  return { ...context, messages: context.messages.map((m) => (m.role === "compactionSummary" || m.role === "branchSummary" ? { ...m, timestamp: 0 } : m)) };
}

/** A file of a store whose agent keeps images inline: no blob ref, pi's v3, and pi reads the original's session. */
async function expectPiReadsOriginal(file: string, options: ReadOptions = {}): Promise<void> {
  const text = await readFile(file, "utf8");
  expect(text, file).not.toContain("blob:sha256:");
  expect(JSON.parse(text.slice(0, text.indexOf("\n"))), file).toMatchObject({ type: "session", version: 3 });
  await expectPiReadsSession(file, options);
}

let stores = 0;
/** A new, empty store root of an agent. */
async function storeRoot(name: string): Promise<{ root: string; storage: NodeFsStorage }> {
  const root = join(tmp, "stores", `${name}-${++stores}`);
  await mkdir(root, { recursive: true });
  return { root, storage: nodeFsStorage({ root }) };
}

/** Replays the original's entries through SessionManager's appends (ids are the new session's). */
function replay(sm: SessionManager): void {
  const ids = new Map<string, string>();
  for (const entry of originalEntries) {
    let id: string;
    if (entry.type === "message") id = sm.appendMessage(structuredClone(entry.message));
    // The last compaction keeps from itself (its v1 index named its own line): nothing is kept,
    // as with an id the session does not have, which is what it gets here.
    else if (entry.type === "compaction") id = sm.appendCompaction(entry.summary, ids.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId, entry.tokensBefore, entry.details, entry.fromHook);
    else throw new Error(`the replay has no append for ${entry.type} entries`);
    ids.set(entry.id, id);
  }
}

async function exportZip(storage: StoragePort, path: string): Promise<Uint8Array> {
  const { sink, bytes } = memorySink();
  await exportArchive(storage, [path], sink);
  return bytes();
}

/** The session member of a one-session zip, as text. */
async function zippedSession(zip: Uint8Array): Promise<string> {
  const member = (await zipMembers(zip)).find((m) => m.name.startsWith("sessions/"))!;
  return new TextDecoder().decode(member.data);
}

beforeAll(async () => {
  tmp = await realpath(await mkdtemp(join(tmpdir(), "sessionkit-owner-format-")));
  // The glued line's two objects on two lines: pi skips a line it cannot parse, we recover both.
  const corpusPort = memoryStorage();
  await corpusPort.write("compact.jsonl", await readFile(CORPUS_FILE));
  const records: string[] = [];
  await scanJsonl(corpusPort, "compact.jsonl", (record) => records.push(JSON.stringify(record)));
  expect(records.length).toBe(new TextDecoder().decode(await readFile(CORPUS_FILE)).trimEnd().split("\n").length + 1);
  v1 = new TextEncoder().encode(records.map((line) => `${line}\n`).join(""));
  const v1File = join(tmp, "original", "compact-v1.jsonl");
  const v3File = join(tmp, "original", "compact-v3.jsonl");
  await mkdir(dirname(v1File), { recursive: true });
  await writeFile(v1File, v1);
  await writeFile(v3File, v1);
  const pi = PiSessionManager.open(v3File); // migrates the file to v3 in place
  originalEntries = json(pi.getEntries()) as unknown as SessionEntry[];
  v3 = await readFile(v3File);
  expect(JSON.parse(new TextDecoder().decode(v3).split("\n")[0]!)).toMatchObject({ type: "session", version: 3 });
  ({ context: original, messages: originalMessages } = await piReads(v3File));
  expect(await piReads(v1File)).toEqual({ context: original, messages: originalMessages });
  originalImages = imagesOf(originalMessages);
  expect(originalImages.map((data) => data.length)).toEqual([68584, 77492, 84460]);
  // oh-my-pi's limits drop keys this session has, and cut no string of it.
  expect(withOmpLimits(originalMessages)).not.toEqual(originalMessages);
  expect(JSON.stringify(originalMessages, (_key, item: unknown) => (typeof item === "string" && item.length > 500_000 ? "TOO LONG" : item))).not.toContain("TOO LONG");

  // The same session in sessionkit's own store and in oh-my-pi's: its images as blob refs.
  const own = memoryStorage();
  const [inOwn] = (await importSessionFiles(own, [{ name: "compact.jsonl", bytes: v3 }])).sessions;
  zips.sessionkit = await exportZip(own, inOwn!.path);
  const omp = await storeRoot("omp-source");
  const [inOmp] = (await importSessionFiles(omp.storage, [{ name: "compact.jsonl", bytes: v3 }], { owner: "omp" })).sessions;
  zips.omp = await exportZip(omp.storage, inOmp!.path);
  const pis = await storeRoot("pi-source");
  await mkdir(join(pis.root, dirname(inOmp!.path)), { recursive: true });
  await writeFile(join(pis.root, inOmp!.path), v3); // a file pi wrote, in pi's store
  zips.pi = await exportZip(pis.storage, inOmp!.path);
  // What each zip carries: refs from the two blob stores, inline images from pi's.
  for (const from of ["sessionkit", "omp"] as const) expect(imagesOf(JSON.parse(`[${(await zippedSession(zips[from])).trimEnd().split("\n").join(",")}]`)).filter((d) => BLOB_REF.test(d))).toHaveLength(3);
  expect(await zippedSession(zips.pi)).not.toContain("blob:sha256:");
}, 60_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// =============================================================================
// pi's store
// =============================================================================

describe("into pi's store, every write path writes what pi writes: pi reads the original's context, images inline byte for byte", () => {
  /** A pi store holding the session imported from a .jsonl, and a SessionManager on it. */
  async function piStoreWithSession(options: SessionManagerOptions = {}) {
    const store = await storeRoot("pi");
    const [imported] = (await importSessionFiles(store.storage, [{ name: "compact.jsonl", bytes: v3 }])).sessions;
    const sm = await SessionManager.open(store.storage, imported!.path, options);
    return { ...store, path: imported!.path, sm };
  }

  const importPaths: Array<[string, (storage: NodeFsStorage) => Promise<string[]>]> = [
    ["import of the v1 .jsonl", async (storage) => (await importSessionFiles(storage, [{ name: "v1.jsonl", bytes: v1 }])).sessions.map((s) => s.path)],
    ["import of the v3 .jsonl", async (storage) => (await importSessionFiles(storage, [{ name: "v3.jsonl", bytes: v3 }])).sessions.map((s) => s.path)],
    [
      "import of a folder's batch (v1 and v3: the second diverges by its ids and is imported as a fork)",
      async (storage) => (await importSessionFiles(storage, [{ name: "a/v1.jsonl", bytes: v1 }, { name: "b/v3.jsonl", bytes: v3 }])).sessions.map((s) => s.path),
    ],
    ["import of a zip from sessionkit's own store (blob refs)", async (storage) => (await importArchive(storage, zips.sessionkit)).sessions.map((s) => s.path)],
    ["import of a zip from oh-my-pi's store (its refs)", async (storage) => (await importArchive(storage, zips.omp)).sessions.map((s) => s.path)],
    ["import of a zip from pi's store (inline)", async (storage) => (await importArchive(storage, zips.pi)).sessions.map((s) => s.path)],
  ];
  for (const [name, write] of importPaths) {
    it(name, async () => {
      const { root, storage } = await storeRoot("pi");
      const paths = await write(storage);
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) await expectPiReadsOriginal(join(root, path));
      expect(await readdir(root)).toEqual(["sessions"]);
      await storage.close();
    });
  }

  it("an import that extends a stored session appends the new entries with their images inline", async () => {
    const { root, storage } = await storeRoot("pi");
    // The stored session: the first 800 lines, before the first image.
    const prefix = new TextDecoder().decode(v3).split("\n").slice(0, 800).join("\n") + "\n";
    const [stored] = (await importSessionFiles(storage, [{ name: "early.jsonl", bytes: new TextEncoder().encode(prefix) }])).sessions;
    const summary = await importArchive(storage, zips.sessionkit);
    expect(summary.sessions).toMatchObject([{ action: "extended", path: stored!.path }]);
    expect(summary.blobs.written).toBe(0);
    await expectPiReadsOriginal(join(root, stored!.path));
    await storage.close();
  });

  it("migration on open (a v1 file in the store) rewrites it in v3 with its images inline", async () => {
    const { root, storage } = await storeRoot("pi");
    const path = "sessions/--Users-badlogic-workspaces-pi-mono--/2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl";
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), v1);
    const sm = await SessionManager.open(storage, path);
    await sm.close();
    expect(sm.getMigratedFrom()).toBe(1);
    await expectPiReadsOriginal(join(root, path));
    expect(await readdir(root)).toEqual(["sessions"]);
    await storage.close();
  });

  it("appends through SessionManager (a new session, every entry of the original appended)", async () => {
    const { root, storage } = await storeRoot("pi");
    const sm = await SessionManager.create(storage, "/Users/badlogic/workspaces/pi-mono");
    replay(sm);
    await sm.close();
    expect(sm.getOwner()).toBe("pi");
    await expectPiReadsOriginal(join(root, sm.getSessionFile()!), { replayed: true });
    expect(await readdir(root)).toEqual(["sessions"]);
    await storage.close();
  });

  const sessionPaths: Array<[string, (sm: SessionManager, storage: NodeFsStorage, path: string) => Promise<string>]> = [
    ["rename (a session_info entry)", async (sm) => (await sm.setSessionName("renamed"), sm.getSessionFile()!)],
    ["moveTo another cwd (file and folder moved, header rewritten)", async (sm) => (await sm.moveTo("/Users/badlogic/elsewhere"), sm.getSessionFile()!)],
    ["fork (a new file with the whole history)", async (sm) => (await sm.fork())!.newSessionFile],
    ["forkFrom (a new session in another cwd from the stored file)", async (_sm, storage, path) => (await SessionManager.forkFrom(storage, path, "/Users/badlogic/forked")).getSessionFile()!],
    ["rewriteEntries (the whole file from memory)", async (sm) => (await sm.rewriteEntries(), sm.getSessionFile()!)],
    ["createBranchedSession (root to leaf in a new file)", async (sm) => sm.createBranchedSession(sm.getLeafId()!)!],
  ];
  for (const [name, write] of sessionPaths) {
    it(name, async () => {
      const { root, storage, sm, path } = await piStoreWithSession();
      const written = await write(sm, storage, path);
      await sm.close();
      await expectPiReadsOriginal(join(root, written));
      expect(await readdir(root)).toEqual(["sessions"]);
      await storage.close();
    });
  }

  describe("a file an older sessionkit left with blob refs in pi's store is written inline by the next write", () => {
    /** The session written as sessionkit wrote it into pi's store before owners kept their formats: refs, and blobs/. */
    async function damagedPiStore() {
      const store = await storeRoot("pi-damaged");
      const [imported] = (await importSessionFiles(store.storage, [{ name: "compact.jsonl", bytes: v3 }], { owner: "sessionkit" })).sessions;
      expect(await readFile(join(store.root, imported!.path), "utf8")).toContain("blob:sha256:");
      return { ...store, path: imported!.path };
    }

    it("rewriteEntries of a session opened with resolveImages: \"lazy\" (refs in memory) resolves them on the way out", async () => {
      const { root, storage, path } = await damagedPiStore();
      const sm = await SessionManager.open(storage, path, { resolveImages: "lazy" });
      expect(imagesOf(sm.getEntries()).filter((data) => BLOB_REF.test(data))).toHaveLength(3);
      await sm.rewriteEntries();
      await sm.close();
      await expectPiReadsOriginal(join(root, path));
      await storage.close();
    });

    it("moveTo writes the moved file from memory, images inline", async () => {
      const { root, storage, path } = await damagedPiStore();
      const sm = await SessionManager.open(storage, path);
      await sm.moveTo("/Users/badlogic/moved");
      await sm.close();
      expect(await exists(join(root, path))).toBe(false);
      await expectPiReadsOriginal(join(root, sm.getSessionFile()!));
      await storage.close();
    });

    it("forkFrom resolves the source's refs", async () => {
      const { root, storage, path } = await damagedPiStore();
      const fork = await SessionManager.forkFrom(storage, path, "/Users/badlogic/forked");
      await fork.close();
      await expectPiReadsOriginal(join(root, fork.getSessionFile()!));
      await storage.close();
    });
  });

  it("indusagi's store and xcsh's (oh-my-pi's layout) keep images inline too: imports, appends, rename, fork", async () => {
    for (const owner of ["indusagi", "xcsh"] as const) {
      const { root, storage } = await storeRoot(owner);
      const [imported] = (await importArchive(storage, zips.omp, { owner })).sessions;
      await expectPiReadsOriginal(join(root, imported!.path));
      const sm = await SessionManager.create(storage, "/Users/badlogic/workspaces/pi-mono", { owner });
      replay(sm);
      await sm.setSessionName("named"); // xcsh: the header's title, rewritten in place
      const forked = (await sm.fork())!.newSessionFile;
      await sm.close();
      expect(sm.getLayout()).toBe(owner === "xcsh" ? "omp" : "pi");
      await expectPiReadsOriginal(join(root, imported!.path));
      await expectPiReadsOriginal(join(root, forked), { replayed: true, limited: owner === "xcsh" });
      expect(await readdir(root), owner).toEqual(["sessions"]);
      await storage.close();
    }
  });
});

// =============================================================================
// oh-my-pi's store
// =============================================================================

/**
 * oh-my-pi's rules for a written file (REFERENCE.md, "Persistence"): an image block in a `content`
 * array with 1024 or more base64 characters is `blob:sha256:<hex>`, the hex being the sha256 of
 * the decoded bytes, which are in `blobs/<hex>`; a smaller one stays inline. On load oh-my-pi
 * resolves the refs of message and custom_message content. Returns the file so resolved.
 */
async function ompLoads(root: string, path: string): Promise<string> {
  const records = (await readFile(join(root, path), "utf8"))
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const blocks: Array<{ data: string }> = [];
  const visit = (value: unknown, inContent: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (inContent && typeof item === "object" && item !== null && (item as { type?: unknown }).type === "image") blocks.push(item as { data: string });
        else visit(item, false);
      }
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) visit(item, key === "content");
    }
  };
  visit(records, false);
  const refs = blocks.filter((block) => block.data.startsWith("blob:"));
  expect(refs.length, `${path}: the large images are refs`).toBe(originalImages.length);
  for (const block of blocks) if (!block.data.startsWith("blob:")) expect(block.data.length, `${path}: only small images stay inline`).toBeLessThan(1024);
  for (const record of records) {
    const content = record.type === "message" ? (record.message as { content?: unknown }).content : record.type === "custom_message" ? record.content : undefined;
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<{ type?: string; data?: string }>) {
      const hash = block.type === "image" ? BLOB_REF.exec(block.data ?? "")?.[1] : undefined;
      if (!hash) continue;
      const bytes = await readFile(join(root, "blobs", hash));
      expect(sha256(bytes), `blobs/${hash}`).toBe(hash);
      block.data = Buffer.from(bytes).toString("base64");
    }
  }
  const resolved = join(tmp, "omp-resolved", `${++copies}.jsonl`);
  await mkdir(dirname(resolved), { recursive: true });
  await writeFile(resolved, records.map((record) => `${JSON.stringify(record)}\n`).join(""));
  return resolved;
}

describe("into oh-my-pi's store, every write path writes oh-my-pi's refs (REFERENCE.md's rules); resolved as oh-my-pi resolves them, pi reads the original's context", () => {
  const OMP = { owner: "omp" } as const;
  const importPaths: Array<[string, (storage: NodeFsStorage) => Promise<string[]>]> = [
    ["import of the v1 .jsonl", async (storage) => (await importSessionFiles(storage, [{ name: "v1.jsonl", bytes: v1 }], OMP)).sessions.map((s) => s.path)],
    ["import of a zip from pi's store (inline images moved out)", async (storage) => (await importArchive(storage, zips.pi, OMP)).sessions.map((s) => s.path)],
    ["import of a zip from sessionkit's own store", async (storage) => (await importArchive(storage, zips.sessionkit, OMP)).sessions.map((s) => s.path)],
  ];
  for (const [name, write] of importPaths) {
    it(name, async () => {
      const { root, storage } = await storeRoot("omp");
      const paths = await write(storage);
      for (const path of paths) await expectPiReadsSession(await ompLoads(root, path));
      await storage.close();
    });
  }

  it("migration, appends, rename (the header's title), moveTo, fork, forkFrom, rewriteEntries, createBranchedSession", async () => {
    const { root, storage } = await storeRoot("omp");
    const migrated = "sessions/--Users-badlogic-workspaces-pi-mono--/2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl";
    await mkdir(dirname(join(root, migrated)), { recursive: true });
    await writeFile(join(root, migrated), v1);
    await (await SessionManager.open(storage, migrated, OMP)).close();

    const sm = await SessionManager.create(storage, "/Users/badlogic/workspaces/pi-mono", OMP);
    replay(sm);
    await sm.flush();
    const appended = sm.getSessionFile()!;
    await sm.setSessionName("named");
    const renamedHeader = JSON.parse((await readFile(join(root, appended), "utf8")).split("\n")[0]!) as { title?: string };
    expect(renamedHeader.title).toBe("named");
    await sm.fork(); // the manager goes on in the fork: it is what moves next
    await sm.moveTo("/Users/badlogic/moved");
    const moved = sm.getSessionFile()!;
    await sm.rewriteEntries();
    const branched = sm.createBranchedSession(sm.getLeafId()!)!;
    await sm.close();
    const fromFile = await SessionManager.forkFrom(storage, moved, "/Users/badlogic/forked", OMP);
    await fromFile.close();

    await expectPiReadsSession(await ompLoads(root, migrated));
    for (const path of [appended, moved, branched, fromFile.getSessionFile()!]) await expectPiReadsSession(await ompLoads(root, path), { replayed: true, limited: true });
    await storage.close();
  });
});

// =============================================================================
// The Python agent's profile (seed 003)
// =============================================================================

type SeedRecord = Record<string, unknown> & { type: string; id: string; parent_id?: string | null };

/**
 * The seed's SessionManager, as seed 003 describes it: the first line is the `session_header`;
 * `leaf_id` follows each appended entry, a `leaf` entry moving it to its `target_id`;
 * build_session_context walks root → leaf by `parent_id`: with no compaction on the path, the
 * message and branch entries in order; else the last compaction's summary first, then the entries
 * from `first_kept_entry_id` up to the compaction, then those after it. Each message is its
 * AgentMessage, a summary `{summary}`.
 */
function seedContext(text: string): { header: Record<string, unknown>; records: SeedRecord[]; messages: unknown[] } {
  const [header, ...records] = text.trimEnd().split("\n").map((line) => JSON.parse(line) as SeedRecord);
  const byId = new Map(records.map((record) => [record.id, record]));
  let leafId: string | null = null;
  for (const record of records) leafId = record.type === "leaf" ? (record.target_id as string) : record.id;
  const path: SeedRecord[] = [];
  for (let cursor = leafId; cursor; ) {
    const record = byId.get(cursor);
    if (!record) break;
    path.push(record);
    cursor = record.parent_id ?? null;
  }
  path.reverse();
  const asMessage = (record: SeedRecord) => (record.type === "message" ? [record.message] : record.type === "branch" ? [{ summary: record.summary }] : []);
  const at = path.findLastIndex((record) => record.type === "compaction");
  if (at < 0) return { header: header!, records, messages: path.flatMap(asMessage) };
  const compaction = path[at]!;
  const kept = path.findIndex((record) => record.id === compaction.first_kept_entry_id);
  return { header: header!, records, messages: [{ summary: compaction.summary }, ...path.slice(kept < 0 ? at : kept, at).flatMap(asMessage), ...path.slice(at + 1).flatMap(asMessage)] };
}

/** The original's context as the seed's reader gives it: a compaction summary is `{summary}`. */
function originalAsSeed(): unknown[] {
  return original.messages.map((m) => (m.role === "compactionSummary" ? { summary: m.summary } : m));
}

/** What the Python agent reads in `file`: its spelling, the images inline byte for byte, the original's messages. */
async function expectSeedReadsOriginal(file: string): Promise<void> {
  const text = await readFile(file, "utf8");
  expect(text, file).not.toContain("blob:sha256:");
  const { header, records, messages } = seedContext(text);
  expect(header, file).toMatchObject({ type: "session_header", id: expect.any(String), cwd: expect.any(String) });
  for (const record of records) {
    expect(Object.keys(record).filter((key) => /[A-Z]/.test(key)), `${file}: ${record.type} ${record.id}`).toEqual([]);
    expect(record, `${file}: ${record.id}`).toHaveProperty("parent_id");
  }
  const payloads = records.flatMap((record) => (record.type === "message" ? [record.message] : []));
  expect(imagesOf(payloads), `${file}: the images byte for byte`).toEqual(originalImages);
  expect(payloads, file).toEqual(originalMessages);
  expect(json(messages), file).toEqual(originalAsSeed());
}

describe("into the Python agent's profile (seed 003), every write path writes its snake_case lines with the images inline: its seed's reader gives the original's messages", () => {
  const OPERATOR = { owner: "operator" } as const;

  it("imports of the .jsonl files and of zips from sessionkit's and oh-my-pi's stores", async () => {
    const { root, storage } = await storeRoot("operator");
    const written = [
      ...(await importSessionFiles(storage, [{ name: "v1.jsonl", bytes: v1 }], OPERATOR)).sessions,
      ...(await importSessionFiles(storage, [{ name: "v3.jsonl", bytes: v3 }], OPERATOR)).sessions,
      ...(await importArchive(storage, zips.omp, OPERATOR)).sessions,
    ];
    expect(written.map((s) => s.action)).toEqual(["created", "forked", "skipped"]);
    for (const session of written.slice(0, 2)) {
      expect(session.path).toMatch(/^sessions\/[^/]+_[0-9a-f-]+\.jsonl$/); // one flat folder
      await expectSeedReadsOriginal(join(root, session.path));
    }
    const other = await storeRoot("operator");
    const [fromZip] = (await importArchive(other.storage, zips.sessionkit, OPERATOR)).sessions;
    await expectSeedReadsOriginal(join(other.root, fromZip!.path));
    expect(await readdir(root)).toEqual(["sessions"]);
    await storage.close();
    await other.storage.close();
  });

  it("appends, rename, moveTo, fork, forkFrom, rewriteEntries, createBranchedSession", async () => {
    const { root, storage } = await storeRoot("operator");
    const sm = await SessionManager.create(storage, "/Users/badlogic/workspaces/pi-mono", OPERATOR);
    replay(sm);
    await sm.setSessionName("named");
    const appended = sm.getSessionFile()!;
    const forked = (await sm.fork())!.newSessionFile;
    await sm.moveTo("/Users/badlogic/moved");
    await sm.rewriteEntries();
    const rewritten = sm.getSessionFile()!;
    const branched = sm.createBranchedSession(sm.getLeafId()!)!;
    await sm.close();
    const fromFile = await SessionManager.forkFrom(storage, rewritten, "/Users/badlogic/forked", OPERATOR);
    await fromFile.close();
    expect(rewritten).toBe(forked); // a flat store: the move rewrites the header in place
    for (const path of [appended, rewritten, branched, fromFile.getSessionFile()!]) await expectSeedReadsOriginal(join(root, path));
    expect(seedContext(await readFile(join(root, rewritten), "utf8")).header).toMatchObject({ cwd: "/Users/badlogic/moved" });
    expect(await readdir(root)).toEqual(["sessions"]);
    await storage.close();
  });
});

// =============================================================================
// The CLI
// =============================================================================

describe("the CLI writes each store's format", () => {
  let bundle: string;
  let home: string;
  const piRoot = () => join(home, ".pi/agent");
  const cli = (args: string[]): Promise<CliResult> => runCli(bundle, args, { env: { HOME: home }, cwd: tmp });

  beforeAll(async () => {
    bundle = await bundleCli(join(tmp, "cli"));
  }, 60_000);

  /** A $HOME holding only `dirs` (each an empty store root). */
  async function freshHome(...dirs: string[]): Promise<void> {
    home = join(tmp, "homes", String(++stores));
    for (const dir of dirs) await mkdir(join(home, dir), { recursive: true });
  }

  /** The session files below `dir`. */
  async function sessionFiles(dir: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) if (entry.isFile() && entry.name.endsWith(".jsonl")) out.push(join(entry.parentPath, entry.name));
    return out.sort();
  }

  it("`sessionkit import compact.jsonl` with only ~/.pi/agent: no blob written, the images stay inline, pi reads the original", async () => {
    await freshHome(".pi/agent");
    const result = await cli(["import", CORPUS_FILE]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("blobs: 0 written (0 bytes), 0 already stored");
    expect(await readdir(piRoot())).toEqual(["sessions"]);
    const [file] = await sessionFiles(piRoot());
    const text = await readFile(file!, "utf8");
    for (const image of originalImages) expect(text).toContain(`"data":"${image}"`);
    expect(text.match(/"type":"image"/g)).toHaveLength(3);
    await expectPiReadsOriginal(file!);
    // The same with --root.
    await freshHome(".pi/agent");
    expect((await cli(["--root", piRoot(), "import", CORPUS_FILE])).stdout).toContain("blobs: 0 written (0 bytes), 0 already stored");
    for (const each of await sessionFiles(piRoot())) await expectPiReadsOriginal(each);
  });

  it("a folder, a zip from oh-my-pi's store, files copied out of oh-my-pi's store (refs from its blobs/), and migrate: all inline", async () => {
    await freshHome(".pi/agent", ".omp/agent");
    // oh-my-pi's store holds the session with its refs.
    const ompStorage = nodeFsStorage({ root: join(home, ".omp/agent") });
    const [inOmp] = (await importSessionFiles(ompStorage, [{ name: "v3.jsonl", bytes: v3 }], { owner: "omp" })).sessions;
    await ompStorage.close();
    const ompFile = join(home, ".omp/agent", inOmp!.path);
    expect(await readFile(ompFile, "utf8")).toContain("blob:sha256:");

    const folder = join(tmp, "folder", String(stores));
    await mkdir(join(folder, "a"), { recursive: true });
    await writeFile(join(folder, "a", "v1.jsonl"), v1);
    await writeFile(join(folder, "v3.jsonl"), v3);
    const zip = join(tmp, `omp-${stores}.zip`);
    await writeFile(zip, zips.omp);
    // Each into a pi store of its own (one the CLI finds as pi's, the others --root folders it takes for pi's).
    const roots = [join(tmp, "cli-pi", `${stores}-folder`), join(tmp, "cli-pi", `${stores}-zip`), piRoot(), join(tmp, "cli-pi", `${stores}-omp-folder`)];
    const results = [
      await cli(["--root", roots[0]!, "import", folder]),
      await cli(["--root", roots[1]!, "import", zip]),
      await cli(["--agent", "pi", "import", ompFile]),
      await cli(["--root", roots[3]!, "import", join(home, ".omp/agent/sessions")]),
    ];
    for (const [i, result] of results.entries()) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr, "no missing blob").not.toContain("blob");
      expect(result.stdout).toContain("blobs: 0 written");
      const files = await sessionFiles(roots[i]!);
      expect(files).toHaveLength(i === 0 ? 2 : 1); // the folder's v3 file diverges from its v1 by its ids: a fork
      for (const file of files) await expectPiReadsOriginal(file);
      expect(await readdir(roots[i]!)).toEqual(["sessions"]);
    }

    // migrate: a v1 file in pi's store.
    const legacy = join(piRoot(), "sessions", "--legacy--", "2025-12-24T00-32-27-967Z_legacy.jsonl");
    await mkdir(dirname(legacy), { recursive: true });
    await writeFile(legacy, v1);
    const migrated = await cli(["migrate", legacy]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain("migrated v1 → v3");
    await expectPiReadsOriginal(legacy);
    expect(await readdir(piRoot())).toEqual(["sessions"]);
  });

  it("into oh-my-pi's store: its refs and blobs/; into a Python profile: its spelling", async () => {
    await freshHome(".omp/agent", ".operator/profiles/work/sessions");
    const intoOmp = await cli(["--agent", "omp", "import", CORPUS_FILE]);
    expect(intoOmp.code, intoOmp.stderr).toBe(0);
    expect(intoOmp.stdout).toContain("blobs: 3 written");
    const ompRoot = join(home, ".omp/agent");
    const [ompFile] = await sessionFiles(join(ompRoot, "sessions"));
    await expectPiReadsSession(await ompLoads(ompRoot, ompFile!.slice(ompRoot.length + 1)));

    const intoProfile = await cli(["--agent", "operator", "import", join(tmp, "original", "compact-v1.jsonl")]);
    expect(intoProfile.code, intoProfile.stderr).toBe(0);
    expect(intoProfile.stdout).toContain("blobs: 0 written");
    const [profileFile] = await sessionFiles(join(home, ".operator/profiles/work/sessions"));
    await expectSeedReadsOriginal(profileFile!);
  });

  it("export from a store of sessionkit's own and import into pi's: the refs become inline images", async () => {
    await freshHome(".pi/agent");
    const own = join(tmp, "own", String(stores));
    const ownStorage = nodeFsStorage({ root: own });
    const [stored] = (await importSessionFiles(ownStorage, [{ name: "v3.jsonl", bytes: v3 }], { owner: "sessionkit" })).sessions;
    await ownStorage.close();
    const zip = join(own, "out.zip");
    const exported = await cli(["--root", own, "export", join(own, stored!.path), "-o", zip]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(await zippedSession(await readFile(zip))).toContain("blob:sha256:");
    const imported = await cli(["import", zip]);
    expect(imported.code, imported.stderr).toBe(0);
    for (const file of await sessionFiles(piRoot())) await expectPiReadsOriginal(file);
  });
});
