/**
 * Hostile archives, each built here from a valid export: every one is refused with a typed error
 * naming the member and the rule, by import and by verify alike; the store is byte-for-byte what
 * it was, and nothing appears beside it.
 */
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminateWorkers } from "@zip.js/zip.js";
import { importArchive, verifyArchive } from "../../../src/archive/index.js";
import { ArchiveError, SessionManager, type ArchiveErrorCode, type ArchiveLimits, type ArchiveRangeSource } from "../../../src/index.js";
import { nodeArchiveCodecs } from "../../../adapters/node-fs/index.js";
import { bytesOf, editManifest, patchField, patchUnixMode, rebuildZip, renameMember, zipBytes, zipMembers, type FixtureEntry } from "../../shared/zip-fixtures.js";
import { assistant, exportToBytes, listing, noise, OWN_STORE, sha256, tempStore, user, type ListedFile, type TempStore } from "./helpers.js";

let origin: TempStore;
let target: TempStore;
/** A valid archive: one session with an image (so one blob). */
let base: Uint8Array;
let sessionMember: string;
let sessionId: string;
let blobMember: string;
let before: ListedFile[];
/** 50 MB of zeros: deflated ~1000:1. */
const zeros = new Uint8Array(50 * 1024 * 1024);
const zerosMember = `blobs/${sha256(zeros)}`;

beforeAll(async () => {
  origin = await tempStore();
  const sm = await SessionManager.create(origin.storage, "/work/app", { ...OWN_STORE, deferUntilAssistant: false });
  for (let i = 0; i < 5; i++) {
    sm.appendMessage(user(`question ${i} ${"context ".repeat(20)}`, i === 0 ? noise(4000, 11) : undefined));
    sm.appendMessage(assistant(`answer ${i}`));
  }
  const path = sm.getSessionFile()!;
  sessionId = sm.getSessionId();
  await sm.close();
  base = (await exportToBytes(origin.storage, [path])).bytes;
  sessionMember = `sessions/${sessionId}.jsonl`;
  blobMember = (await zipMembers(base)).find((m) => m.name.startsWith("blobs/"))!.name;

  // The store under attack already holds a session of its own.
  target = await tempStore();
  const own = await SessionManager.create(target.storage, "/home/me", { ...OWN_STORE, deferUntilAssistant: false });
  own.appendMessage(user("mine"));
  own.appendMessage(assistant("yours"));
  await own.close();
  before = await listing(target.root);
});

afterAll(async () => {
  await origin?.cleanup();
  await target?.cleanup();
  await terminateWorkers();
});

/** Rebuilds the base archive with `session`'s bytes as the session member, the manifest kept in step. */
async function withSessionBytes(edit: (text: string) => string): Promise<Uint8Array> {
  const members = await zipMembers(base);
  const member = members.find((m) => m.name === sessionMember)!;
  const data = new TextEncoder().encode(edit(new TextDecoder().decode(member.data)));
  const rebuilt = await rebuildZip(base, (ms) => {
    ms.find((m) => m.name === sessionMember)!.data = data;
  });
  return editManifest(rebuilt, (manifest) => {
    manifest.sessions[0].bytes = data.length;
    manifest.sessions[0].sha256 = sha256(data);
  });
}

/** `bytes` as an ArchiveRangeSource: each read a copy of its range, as a file read is. */
function rangeSource(bytes: Uint8Array): ArchiveRangeSource {
  return { size: bytes.length, read: async (offset, length) => bytes.slice(offset, offset + length) };
}

const add = (...extra: FixtureEntry[]) => rebuildZip(base, (members) => [...members, ...extra]);

interface HostileCase {
  name: string;
  build: () => Promise<Uint8Array>;
  code: ArchiveErrorCode;
  member: () => string | undefined;
  message?: RegExp;
  limits?: Partial<ArchiveLimits>;
}

const cases: HostileCase[] = [
  { name: "a ../ name", build: () => add({ name: "../evil.txt", data: "x" }), code: "unsafe-name", member: () => "../evil.txt", message: /'\.\.'/ },
  { name: "a ../ name inside a whitelisted prefix", build: () => add({ name: "sessions/../../evil.jsonl", data: "x" }), code: "unsafe-name", member: () => "sessions/../../evil.jsonl" },
  { name: "an absolute name", build: () => add({ name: "/tmp/evil", data: "x" }), code: "unsafe-name", member: () => "/tmp/evil", message: /absolute/ },
  { name: "a backslash name", build: () => add({ name: "a\\b", data: "x" }), code: "unsafe-name", member: () => "a\\b", message: /backslash/ },
  { name: "a backslash traversal", build: () => add({ name: "..\\evil", data: "x" }), code: "unsafe-name", member: () => "..\\evil" },
  { name: "a drive-letter name", build: () => add({ name: "C:/x", data: "x" }), code: "unsafe-name", member: () => "C:/x", message: /drive-letter/ },
  {
    name: "a symlink entry (unix mode from zip.js)",
    build: async () => rebuildZip(base, (ms) => ms.map((m) => (m.name === sessionMember ? { name: sessionMember, data: "/etc/passwd", unixMode: 0o120777 } : m))),
    code: "unsafe-entry",
    member: () => sessionMember,
    message: /symlink/,
  },
  { name: "a symlink entry (patched external attributes)", build: async () => patchUnixMode(base, blobMember, 0o120777), code: "unsafe-entry", member: () => blobMember, message: /symlink/ },
  { name: "a directory entry", build: () => add({ name: "sessions/", data: "", directory: true }), code: "unsafe-entry", member: () => "sessions/", message: /directory/ },
  { name: "an encrypted entry", build: () => rebuildZip(base, (ms) => ms.map((m) => (m.name === blobMember ? { ...m, password: "secret" } : m))), code: "unsafe-entry", member: () => blobMember, message: /encrypted/ },
  {
    name: "duplicate names",
    build: async () => {
      const twin = blobMember.slice(0, -1) + (blobMember.endsWith("0") ? "1" : "0");
      const zip = await add({ name: twin, data: noise(10), level: 0 });
      return renameMember(zip, twin, blobMember);
    },
    code: "duplicate",
    member: () => blobMember,
  },
  {
    name: "a local header naming another file than the directory",
    build: async () => renameMember(base, blobMember, blobMember.replace("blobs/", "../../"), { localOnly: true }),
    code: "ambiguous",
    member: () => blobMember,
  },
  { name: "a name off the whitelist", build: () => add({ name: "notes.txt", data: "hello" }), code: "unexpected-member", member: () => "notes.txt" },
  {
    name: "an entry that inflates past its declared size",
    build: async () => {
      const declared = (await zipMembers(base)).find((m) => m.name === sessionMember)!.data.length - 100;
      const lying = await editManifest(base, (manifest) => {
        manifest.sessions[0].bytes = declared;
      });
      return patchField(lying, sessionMember, "uncompressedSize", () => declared);
    },
    code: "size-mismatch",
    member: () => sessionMember,
    message: /inflates past/,
  },
  {
    name: "a stored entry declaring another size than it stores",
    build: async () => patchField(base, blobMember, "uncompressedSize", (n) => n - 1),
    code: "size-mismatch",
    member: () => blobMember,
  },
  {
    name: "a ratio bomb (50 MB of zeros)",
    build: () => add({ name: zerosMember, data: zeros }),
    code: "ratio",
    member: () => zerosMember,
    message: /ratio \d+:1/,
  },
  { name: "too many entries", build: async () => base, code: "too-many-entries", member: () => undefined, limits: { maxEntries: 2 }, message: /maxEntries/ },
  { name: "an entry over maxEntryBytes", build: async () => base, code: "too-large", member: () => blobMember, limits: { maxEntryBytes: 3900 }, message: /maxEntryBytes/ },
  { name: "members over maxTotalBytes", build: async () => base, code: "too-large", member: () => blobMember, limits: { maxTotalBytes: 4500 }, message: /maxTotalBytes/ },
  { name: "a session over maxSessionLines", build: async () => base, code: "too-many-lines", member: () => sessionMember, limits: { maxSessionLines: 5 }, message: /maxSessionLines/ },
  { name: "a crc mismatch in a stored blob", build: async () => patchField(base, blobMember, "crc", (crc) => crc ^ 1), code: "crc", member: () => blobMember },
  { name: "a crc mismatch in a deflated session", build: async () => patchField(base, sessionMember, "crc", (crc) => crc ^ 0x100), code: "crc", member: () => sessionMember },
  {
    name: "a blob whose bytes do not match its name",
    build: () => rebuildZip(base, (ms) => ms.map((m) => (m.name === blobMember ? { ...m, data: noise(bytesOf(m.data).length, 99) } : m))),
    code: "blob-hash",
    member: () => blobMember,
  },
  {
    name: "a manifest lying about a session's size",
    build: () => editManifest(base, (manifest) => void (manifest.sessions[0].bytes += 1)),
    code: "manifest-mismatch",
    member: () => sessionMember,
    message: /bytes/,
  },
  {
    name: "a manifest lying about a session's hash",
    build: () => editManifest(base, (manifest) => void (manifest.sessions[0].sha256 = "0".repeat(64))),
    code: "manifest-mismatch",
    member: () => sessionMember,
    message: /sha256/,
  },
  {
    name: "a manifest lying about a blob's size",
    build: () => editManifest(base, (manifest) => void (manifest.blobs[0].bytes -= 1)),
    code: "manifest-mismatch",
    member: () => blobMember,
  },
  {
    name: "a manifest lying about entry counts",
    build: () => editManifest(base, (manifest) => void (manifest.sessions[0].entries = 3)),
    code: "manifest-mismatch",
    member: () => sessionMember,
    message: /entries/,
  },
  { name: "a member the manifest does not list", build: () => editManifest(base, (manifest) => void (manifest.blobs = [])), code: "manifest-mismatch", member: () => blobMember, message: /not listed/ },
  {
    name: "a manifest listing a member that is not there",
    build: () => rebuildZip(base, (ms) => ms.filter((m) => m.name !== blobMember)),
    code: "manifest-mismatch",
    member: () => blobMember,
    message: /not in the archive/,
  },
  { name: "no manifest", build: () => rebuildZip(base, (ms) => ms.filter((m) => m.name !== "manifest.json")), code: "bad-manifest", member: () => "manifest.json" },
  {
    name: "a manifest that is not JSON",
    build: () => rebuildZip(base, (ms) => ms.map((m) => (m.name === "manifest.json" ? { ...m, data: "{format:" } : m))),
    code: "bad-manifest",
    member: () => "manifest.json",
  },
  {
    name: "a manifest of a newer major version",
    build: () => editManifest(base, (manifest) => void Object.assign(manifest, { version: "2.0", sessions: "a new shape" })),
    code: "unsupported-version",
    member: () => "manifest.json",
    message: /version 2\.0 is newer than this sessionkit reads \(1\.x\): upgrade sessionkit/,
  },
  { name: "a truncated zip", build: async () => base.slice(0, base.length - 40), code: "truncated", member: () => undefined },
  { name: "a zip cut in half", build: async () => base.slice(0, base.length >> 1), code: "truncated", member: () => undefined },
  { name: "a file that is not a zip", build: async () => new TextEncoder().encode('{"type":"session"}\n'), code: "not-a-zip", member: () => undefined },
  { name: "an empty file", build: async () => new Uint8Array(0), code: "not-a-zip", member: () => undefined },
  {
    name: "a session line that is not JSON",
    build: () => withSessionBytes((text) => text.split("\n").toSpliced(3, 0, '{"type":"message", oops').join("\n")),
    code: "bad-session",
    member: () => sessionMember,
    message: /line 4: not JSON/,
  },
  {
    name: "a session entry that its type's schema rejects (a message without its message)",
    build: () =>
      withSessionBytes((text) =>
        text.split("\n").toSpliced(3, 0, '{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}').join("\n"),
      ),
    code: "bad-session",
    member: () => sessionMember,
    message: /line 4: invalid entry: message: message/,
  },
  {
    name: "a session whose header id is not its member's",
    build: () => withSessionBytes((text) => text.replace(sessionId, "0".repeat(8) + sessionId.slice(8))),
    code: "bad-session",
    member: () => sessionMember,
    message: /header's session id/,
  },
  {
    name: "a session that is not version 3",
    build: () => withSessionBytes((text) => text.replace('"version":3', '"version":2')),
    code: "bad-session",
    member: () => sessionMember,
    message: /version 2/,
  },
  {
    name: "a session member that is not a session",
    build: () => withSessionBytes(() => '{"hello":"world"}\n'),
    code: "bad-session",
    member: () => sessionMember,
    message: /not a session file/,
  },
];

// The core's web codecs (DecompressionStream, hash-wasm), and Node's that the CLI passes.
describe.each([
  ["web codecs", {}],
  ["node-fs's nodeArchiveCodecs", nodeArchiveCodecs],
])("hostile archives (%s)", (_codecs, codecs) => {
  for (const hostile of cases) {
    it(`${hostile.name} → ${hostile.code}`, async () => {
      const bytes = await hostile.build();
      const options = { ...OWN_STORE, ...codecs, ...(hostile.limits ? { limits: hostile.limits } : {}) };
      const error = await importArchive(target.storage, bytes, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArchiveError);
      const archiveError = error as ArchiveError;
      expect({ code: archiveError.code, member: archiveError.member, message: archiveError.message }).toMatchObject({ code: hostile.code, member: hostile.member() });
      if (hostile.message) expect(archiveError.message).toMatch(hostile.message);
      expect(archiveError.toJSON()).toMatchObject({ error: "ArchiveError", code: hostile.code });

      expect(await listing(target.root)).toEqual(before);
      expect(await readdir(target.parent)).toEqual(["store"]);

      const verified = await verifyArchive(bytes, options).catch((e: unknown) => e);
      expect(verified).toMatchObject({ code: hostile.code, member: hostile.member() });
      // The same bytes read a range at a time, as the CLI reads an archive file.
      const verifiedByRanges = await verifyArchive(rangeSource(bytes), options).catch((e: unknown) => e);
      expect(verifiedByRanges).toMatchObject({ code: hostile.code, member: hostile.member() });
    });
  }
});

describe("the limits can be raised and the base archive is valid", () => {
  it("the unmodified archive imports (into another store)", async () => {
    const other = await tempStore();
    try {
      const summary = await importArchive(other.storage, base, OWN_STORE);
      expect(summary.sessions[0]).toMatchObject({ action: "created", id: sessionId });
    } finally {
      await other.cleanup();
    }
  });

  it("a raised ratio limit lets the zeros through to the next rule", async () => {
    const bomb = await add({ name: zerosMember, data: zeros });
    const error = await verifyArchive(bomb, { limits: { maxRatio: 10_000 } }).catch((e) => e);
    expect(error).toMatchObject({ code: "manifest-mismatch", member: zerosMember });
  });

  it("a newer minor version is read", async () => {
    const summary = await verifyArchive(await editManifest(base, (manifest) => void (manifest.version = "1.7")));
    expect(summary.version).toBe("1.7");
  });

  it("a stream source is buffered, up to maxTotalBytes", async () => {
    const stream = () => new Blob([base as BlobPart]).stream();
    expect((await verifyArchive(stream())).sessions).toHaveLength(1);
    const error = await verifyArchive(stream(), { limits: { maxTotalBytes: 100, maxEntries: 1 } }).catch((e) => e);
    expect(error).toMatchObject({ code: "too-large" });
    expect(error.message).toMatch(/stream/);
  });

  it("limits must be positive numbers", async () => {
    await expect(verifyArchive(base, { limits: { maxRatio: 0 } })).rejects.toThrow(RangeError);
  });

  it("a manifest.json that is not first still reads (other zip tools may reorder)", async () => {
    const reordered = await rebuildZip(base, (ms) => [...ms.slice(1), ms[0]!]);
    expect((await verifyArchive(reordered)).sessions[0]!.id).toBe(sessionId);
  });
});

describe("the fixtures do what they say", () => {
  it("a plain zip of the fixtures reads back", async () => {
    const zip = await zipBytes([{ name: "a", data: "1" }, { name: "b", data: noise(10), level: 0 }]);
    expect((await zipMembers(zip)).map((m) => [m.name, m.level])).toEqual([
      ["a", 6],
      ["b", 0],
    ]);
  });
});
