/**
 * Builders of hostile zips for the archive tests (Node and browser: no Node imports). Well-formed
 * zips come from zip.js's ZipWriter; malformed ones are patched byte by byte, in the local header,
 * the data descriptor and the central directory alike, so the archive lies consistently.
 */
import { Uint8ArrayReader, Uint8ArrayWriter, ZipReader, ZipWriter } from "@zip.js/zip.js";

export interface FixtureEntry {
  name: string;
  data: Uint8Array | string;
  /** 0 = stored; default deflate. */
  level?: number;
  unixMode?: number;
  directory?: boolean;
  /** Encrypts the entry (AES). */
  password?: string;
}

const encoder = new TextEncoder();

export function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/** A zip of `entries`, in order. */
export async function zipBytes(entries: readonly FixtureEntry[]): Promise<Uint8Array> {
  const out = new Uint8ArrayWriter();
  const writer = new ZipWriter(out, { useWebWorkers: false });
  for (const entry of entries) {
    if (entry.directory) {
      await writer.add(entry.name, undefined, { directory: true });
      continue;
    }
    await writer.add(entry.name, new Uint8ArrayReader(bytesOf(entry.data)), {
      ...(entry.level === undefined ? {} : { level: entry.level }),
      ...(entry.unixMode === undefined ? {} : { unixMode: entry.unixMode }),
      ...(entry.password === undefined ? {} : { password: entry.password }),
    });
  }
  await writer.close();
  return out.getData();
}

/** Every member of a (well-formed) zip, in order. */
export async function zipMembers(zip: Uint8Array | Blob): Promise<{ name: string; data: Uint8Array; level: number }[]> {
  const reader = new ZipReader(new Uint8ArrayReader(zip instanceof Blob ? new Uint8Array(await zip.arrayBuffer()) : zip), { useWebWorkers: false });
  const out: { name: string; data: Uint8Array; level: number }[] = [];
  for (const entry of await reader.getEntries()) {
    if (entry.directory) continue;
    out.push({ name: entry.filename, data: await entry.getData(new Uint8ArrayWriter()), level: entry.compressionMethod === 0 ? 0 : 6 });
  }
  await reader.close();
  return out;
}

/** Rebuilds a zip from its members after `edit` changed the list. */
export async function rebuildZip(zip: Uint8Array | Blob, edit: (members: FixtureEntry[]) => FixtureEntry[] | void): Promise<Uint8Array> {
  const members: FixtureEntry[] = await zipMembers(zip);
  return zipBytes(edit(members) ?? members);
}

/** Rewrites manifest.json of an archive (and rebuilds it). */
export async function editManifest(zip: Uint8Array | Blob, edit: (manifest: any) => void): Promise<Uint8Array> {
  return rebuildZip(zip, (members) => {
    const member = members.find((m) => m.name === "manifest.json")!;
    const manifest = JSON.parse(new TextDecoder().decode(bytesOf(member.data)));
    edit(manifest);
    member.data = JSON.stringify(manifest);
  });
}

// --- byte patching ---------------------------------------------------------

const CENTRAL = 0x02014b50;
const DESCRIPTOR = 0x08074b50;
const END = 0x06054b50;

interface Record {
  name: string;
  central: number;
  local: number;
  /** Offset of the data descriptor's crc field, when the entry has one. */
  descriptor: number | null;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The central directory records of a zip (no zip64). */
function centralRecords(zip: Uint8Array): Record[] {
  const v = view(zip);
  let end = zip.length - 22;
  while (end >= 0 && v.getUint32(end, true) !== END) end--;
  if (end < 0) throw new Error("no end of central directory");
  const count = v.getUint16(end + 10, true);
  let at = v.getUint32(end + 16, true);
  const records: Record[] = [];
  for (let i = 0; i < count; i++) {
    if (v.getUint32(at, true) !== CENTRAL) throw new Error(`no central record at ${at}`);
    const nameLength = v.getUint16(at + 28, true);
    const extraLength = v.getUint16(at + 30, true);
    const commentLength = v.getUint16(at + 32, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    const local = v.getUint32(at + 42, true);
    const flags = v.getUint16(local + 6, true);
    let descriptor: number | null = null;
    if (flags & 0x8) {
      const dataStart = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
      const after = dataStart + v.getUint32(at + 20, true);
      descriptor = v.getUint32(after, true) === DESCRIPTOR ? after + 4 : after;
    }
    records.push({ name, central: at, local, descriptor });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return records;
}

function recordOf(zip: Uint8Array, name: string): Record {
  const record = centralRecords(zip).find((r) => r.name === name);
  if (!record) throw new Error(`no member ${name}`);
  return record;
}

type Field = "crc" | "compressedSize" | "uncompressedSize";
const CENTRAL_OFFSET: { [F in Field]: number } = { crc: 16, compressedSize: 20, uncompressedSize: 24 };
const LOCAL_OFFSET: { [F in Field]: number } = { crc: 14, compressedSize: 18, uncompressedSize: 22 };
const DESCRIPTOR_OFFSET: { [F in Field]: number } = { crc: 0, compressedSize: 4, uncompressedSize: 8 };

/** A copy of `zip` where every header of `name` declares `value` for `field`. */
export function patchField(zip: Uint8Array, name: string, field: Field, value: (old: number) => number): Uint8Array {
  const out = new Uint8Array(zip); // a copy (Buffer.slice would be a view)
  const v = view(out);
  const record = recordOf(out, name);
  const set = (offset: number) => v.setUint32(offset, value(v.getUint32(offset, true)) >>> 0, true);
  set(record.central + CENTRAL_OFFSET[field]);
  if (record.descriptor !== null) set(record.descriptor + DESCRIPTOR_OFFSET[field]);
  else set(record.local + LOCAL_OFFSET[field]);
  return out;
}

/** A copy of `zip` where member `name` has the unix mode `mode` (e.g. a symlink, 0o120777). */
export function patchUnixMode(zip: Uint8Array, name: string, mode: number): Uint8Array {
  const out = new Uint8Array(zip); // a copy (Buffer.slice would be a view)
  const v = view(out);
  const record = recordOf(out, name);
  v.setUint16(record.central + 4, (3 << 8) | (v.getUint16(record.central + 4, true) & 0xff), true); // made by: unix
  v.setUint32(record.central + 38, ((mode << 16) | (v.getUint32(record.central + 38, true) & 0xffff)) >>> 0, true);
  return out;
}

/**
 * A copy of `zip` where member `from` is named `to` (same byte length) in every header, or only in
 * its local header (what a streaming reader would see) with `localOnly`.
 */
export function renameMember(zip: Uint8Array, from: string, to: string, options: { localOnly?: boolean } = {}): Uint8Array {
  const a = encoder.encode(from);
  const b = encoder.encode(to);
  if (a.length !== b.length) throw new Error("renameMember keeps the name length");
  const out = new Uint8Array(zip); // a copy (Buffer.slice would be a view)
  const record = recordOf(out, from);
  if (!options.localOnly) out.set(b, record.central + 46);
  out.set(b, record.local + 30);
  return out;
}
