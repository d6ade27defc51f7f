/**
 * Reading an untrusted zip: every entry checked from the central directory before anything is
 * inflated (names, types, counts, sizes, ratios), then members read one at a time into a buffer of
 * exactly their declared size, with zip.js checking the CRC-32 and the local headers.
 */
import {
  BlobReader,
  ERR_AMBIGUOUS_ARCHIVE,
  ERR_CENTRAL_DIRECTORY_NOT_FOUND,
  ERR_ENTRY_DATA_OUT_OF_BOUNDS,
  ERR_EOCDR_NOT_FOUND,
  ERR_INVALID_COMPRESSED_DATA,
  ERR_INVALID_CRC32,
  ERR_INVALID_UNCOMPRESSED_SIZE,
  ERR_LOCAL_FILE_HEADER_NOT_FOUND,
  ERR_OVERLAPPING_ENTRY,
  Reader,
  Uint8ArrayReader,
  ZipReader,
  type Entry,
  type FileEntry,
} from "@zip.js/zip.js";
import { crc32, crc32Incremental, type NewCrc32 } from "./hashes.js";
import { ArchiveError, type ArchiveErrorCode } from "./errors.js";
import { RATIO_EXEMPT_BYTES, type ArchiveLimits } from "./limits.js";
import { classifyMember, unsafeNameRule, type MemberKind } from "./manifest.js";
import { concatAll } from "../format/bytes.js";

/**
 * Where an archive is read from. Reading a zip needs random access (its directory is at the end):
 * a Blob (a File from a picker, `fs.openAsBlob` in Node) is read in place, a Uint8Array as is, an
 * {@link ArchiveRangeSource} (an open file) a range at a time, and a ReadableStream is buffered in
 * memory first (up to the `maxTotalBytes` limit).
 * @category Archives
 */
export type ArchiveSource = Blob | Uint8Array | ArchiveRangeSource | ReadableStream<Uint8Array>;

/**
 * An archive read by ranges, e.g. an open file: each range is one read. In Node a file's Blob
 * (`fs.openAsBlob`) opens the file again for every range it reads and copies each through a
 * stream: for the 200 blobs of the bench archive, 93–113 ms of CPU against 25–36 ms for reads
 * on one open file handle.
 * @category Archives
 */
export interface ArchiveRangeSource {
  /** Bytes in the archive. */
  readonly size: number;
  /** The `length` bytes at `offset`, or those there are when the archive ends before. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

export interface ZipMember {
  name: string;
  kind: MemberKind;
  entry: FileEntry;
}

export interface OpenedZip {
  /** Members in central-directory order. */
  members: ZipMember[];
  byName: Map<string, ZipMember>;
  /** Bytes of the archive. */
  size: number;
  /** Inflates a member into memory, checking its declared size and CRC-32. */
  read(member: ZipMember): Promise<Uint8Array>;
  /**
   * A stored member's bytes once more, after `read` checked it: the same range of the source,
   * without the header and CRC-32 checks again (a caller re-reading checks the bytes' sha256).
   */
  readStoredAgain(member: ZipMember): Promise<Uint8Array>;
  /** `read`, with the bytes readable while they inflate; `onData` sees each piece as it lands. */
  inflate(member: ZipMember, onData?: (chunk: Uint8Array) => void): Inflating;
  close(): Promise<void>;
}

/** A member being inflated into a buffer of its declared size. */
interface Inflating {
  /** Filled from the start as the member inflates; whole and checked once `done` resolves. */
  bytes: Uint8Array;
  /** Resolves once the first `end` bytes (at most the declared size) are in `bytes`; rejects when inflating fails. */
  available(end: number): Promise<void>;
  /** Resolves with `bytes` when the member is inflated and its size and CRC-32 checked. */
  done: Promise<Uint8Array>;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ARCHIVE = [0x50, 0x4b, 0x05, 0x06];

/**
 * Makes a raw-deflate decompressor; the default is `new DecompressionStream("deflate-raw")`.
 *
 * @inline
 */
export type InflateRaw = () => ReadableWritablePair<Uint8Array, Uint8Array<ArrayBuffer>>;

const webInflateRaw: InflateRaw = () => new DecompressionStream("deflate-raw");

/** The archive's bytes as the reading code takes them: a range at a time. */
interface Ranges {
  size: number;
  /** Bytes [start, end), or fewer when the source ends before; `owned`: not a view of bytes the caller holds. */
  read(start: number, end: number, owned: boolean): Promise<Uint8Array>;
  /** zip.js's reader of the same bytes. */
  zipReader(): Reader<unknown>;
}

function rangesOf(data: Blob | Uint8Array | ArchiveRangeSource): Ranges {
  if (data instanceof Uint8Array) {
    return { size: data.length, read: async (start, end, owned) => (owned ? data.slice(start, end) : data.subarray(start, end)), zipReader: () => new Uint8ArrayReader(data) };
  }
  if (data instanceof Blob) {
    return { size: data.size, read: async (start, end) => new Uint8Array(await data.slice(start, end).arrayBuffer()), zipReader: () => new BlobReader(data) };
  }
  const read = (start: number, end: number) => data.read(start, Math.max(0, Math.min(end, data.size) - start));
  return { size: data.size, read, zipReader: () => new RangeReader(data.size, read) };
}

/** zip.js's reads of an ArchiveRangeSource. */
class RangeReader extends Reader<null> {
  constructor(
    private readonly sourceSize: number,
    private readonly readRange: (start: number, end: number) => Promise<Uint8Array>,
  ) {
    super(null);
  }

  override async init(): Promise<void> {
    this.size = this.sourceSize;
  }

  override readUint8Array(index: number, length: number): Promise<Uint8Array> {
    return this.readRange(index, index + length);
  }
}

export async function openZip(
  source: ArchiveSource,
  limits: ArchiveLimits,
  options: { useWebWorkers?: boolean; inflateRaw?: InflateRaw; crc32?: NewCrc32 } = {},
): Promise<OpenedZip> {
  const data = rangesOf(source instanceof ReadableStream ? await bufferStream(source, limits.maxTotalBytes + limits.maxEntries * 1024) : source);
  const size = data.size;
  const head = await data.read(0, 4, false);
  const startsLikeZip = startsWith(head, LOCAL_HEADER) || startsWith(head, EMPTY_ARCHIVE);
  if (!startsLikeZip) throw new ArchiveError("not-a-zip", "the source is not a zip file (no zip signature at its start)");

  const reader = new ZipReader(data.zipReader(), {
    useWebWorkers: options.useWebWorkers ?? false,
    checkCrc32: true,
    checkOverlappingEntry: true,
    // Local headers must agree with the central directory, names included.
    strictness: "strict",
  });
  const members: ZipMember[] = [];
  const byName = new Map<string, ZipMember>();
  let count = 0;
  let total = 0;
  try {
    // Names are validated here, by a whitelist stricter than zip.js's; "balanced" lets duplicate
    // names through to be reported by name below.
    for await (const entry of reader.getEntriesGenerator({ strictness: "balanced", filenameValidation: "tolerant" })) {
      if (++count > limits.maxEntries) throw new ArchiveError("too-many-entries", `more than ${limits.maxEntries} entries (limit maxEntries)`);
      const member = checkEntry(entry, byName, limits);
      total += entry.uncompressedSize;
      if (total > limits.maxTotalBytes) {
        throw new ArchiveError("too-large", `members add up to more than ${limits.maxTotalBytes} bytes uncompressed (limit maxTotalBytes)`, { member: member.name });
      }
      members.push(member);
      byName.set(member.name, member);
    }
  } catch (error) {
    await reader.close().catch(() => {});
    throw toArchiveError(error, undefined, startsWith(head, LOCAL_HEADER));
  }

  const inflater = options.useWebWorkers ? ("zip.js" as const) : { inflateRaw: options.inflateRaw ?? webInflateRaw, newCrc32: options.crc32 ?? crc32Incremental };
  const newCrc32 = options.crc32;
  return {
    members,
    byName,
    size,
    read: (member) => (member.entry.compressionMethod === 0 ? readStored(member, data, newCrc32) : inflateMember(member, data, inflater).done),
    readStoredAgain: async (member) => (member.entry.localDirectory ? storedRange(member, data) : readStored(member, data, newCrc32)),
    inflate: (member, onData) => inflateMember(member, data, inflater, onData),
    close: () => reader.close(),
  };
}

function checkEntry(entry: Entry, seen: ReadonlyMap<string, ZipMember>, limits: ArchiveLimits): ZipMember {
  const name = entry.filename;
  const unsafe = unsafeNameRule(name);
  if (unsafe) throw new ArchiveError("unsafe-name", `unsafe member name ${JSON.stringify(name)} (${unsafe})`, { member: name });
  const unixType = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (entry.directory || name.endsWith("/")) throw new ArchiveError("unsafe-entry", "directory entry (only files are allowed)", { member: name });
  if (entry.symlink || (unixType !== 0 && unixType !== S_IFREG)) {
    throw new ArchiveError("unsafe-entry", `not a regular file (unix mode ${(entry.externalFileAttributes >>> 16).toString(8)}${entry.symlink ? ", a symlink" : ""})`, { member: name });
  }
  if (entry.encrypted) throw new ArchiveError("unsafe-entry", "encrypted entry", { member: name });
  if (seen.has(name)) throw new ArchiveError("duplicate", "the name occurs twice in the archive", { member: name });
  const kind = classifyMember(name);
  if (!kind) throw new ArchiveError("unexpected-member", "not an archive member name (manifest.json, sessions/<id>.jsonl or blobs/<sha256>)", { member: name });
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw new ArchiveError("unsupported-compression", `compression method ${entry.compressionMethod} (only stored and deflated are read)`, { member: name });
  }
  const { uncompressedSize, compressedSize } = entry;
  if (uncompressedSize > limits.maxEntryBytes) {
    throw new ArchiveError("too-large", `${uncompressedSize} bytes uncompressed, over the ${limits.maxEntryBytes} of limit maxEntryBytes`, { member: name });
  }
  if (entry.compressionMethod === 0 && compressedSize !== uncompressedSize) {
    throw new ArchiveError("size-mismatch", `stored entry declares ${compressedSize} bytes stored but ${uncompressedSize} uncompressed`, { member: name });
  }
  if (uncompressedSize > RATIO_EXEMPT_BYTES && uncompressedSize / Math.max(compressedSize, 1) > limits.maxRatio) {
    const ratio = Math.round(uncompressedSize / Math.max(compressedSize, 1));
    throw new ArchiveError("ratio", `compression ratio ${ratio}:1 (${compressedSize} → ${uncompressedSize} bytes) is over limit maxRatio ${limits.maxRatio}`, { member: name });
  }
  return { name, kind, entry: entry as FileEntry };
}

/**
 * A stored member read straight from the source: zip.js checks its local header against the
 * directory, its bounds and overlaps (without reading the data); the bytes are then one range of
 * the source and their CRC-32 is checked here (hashes.ts). Through zip.js's stream pipeline a
 * 200 KB member costs ~3× as much.
 */
async function readStored(member: ZipMember, data: Ranges, newCrc32?: NewCrc32): Promise<Uint8Array> {
  const { entry, name } = member;
  try {
    await entry.getData(new WritableStream(), { checkOverlappingEntryOnly: true, strictness: "strict" });
  } catch (error) {
    throw toArchiveError(error, name, true);
  }
  const bytes = await storedRange(member, data);
  if ((await crc32(bytes, newCrc32)) !== entry.crc32) throw new ArchiveError("crc", "CRC-32 of the data does not match the one stored", { member: name });
  return bytes;
}

/** The data of a stored member whose local header has been read (it gives the data's offset). */
async function storedRange(member: ZipMember, data: Ranges): Promise<Uint8Array> {
  const { entry, name } = member;
  const start = entry.localDirectory!.dataOffset;
  const end = start + entry.compressedSize;
  const bytes = await data.read(start, end, true);
  if (bytes.length !== entry.compressedSize) throw new ArchiveError("truncated", "the entry's data runs past the end of the archive", { member: name });
  return bytes;
}

/**
 * A deflated member inflated into a buffer of its declared size. Without web workers it is read
 * as one range of the source (after zip.js's header, bounds and overlap checks) and inflated by
 * `DecompressionStream` (on Node's thread pool), with its CRC-32 checked here: zip.js reads a
 * member in 64 KiB reads of the source, each a file read when the source is a file's Blob.
 */
function inflateMember(member: ZipMember, data: Ranges, inflater: Inflater | "zip.js", onData?: (chunk: Uint8Array) => void): Inflating {
  const declared = member.entry.uncompressedSize;
  const out = new Uint8Array(declared);
  let received = 0;
  let failure: unknown = null;
  let waiters: { end: number; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const wake = () => {
    waiters = waiters.filter((waiter) => {
      if (failure !== null) waiter.reject(failure);
      else if (waiter.end <= received) waiter.resolve();
      else return true;
      return false;
    });
  };
  const sink = new WritableStream<Uint8Array>({
    write(chunk) {
      // zip.js also stops an entry that inflates past its declared size; this is the second guard.
      if (received + chunk.length > declared) {
        throw new ArchiveError("size-mismatch", `inflates past its declared ${declared} bytes`, { member: member.name });
      }
      out.set(chunk, received);
      received += chunk.length;
      onData?.(chunk);
      if (waiters.length > 0) wake();
    },
  });
  const done = (async () => {
    try {
      if (inflater === "zip.js") await member.entry.getData(sink, { useWebWorkers: true, checkCrc32: true, checkOverlappingEntry: true, strictness: "strict" });
      else await inflateRange(member, data, inflater, sink);
    } catch (error) {
      throw toArchiveError(error, member.name, true);
    }
    if (received !== declared) throw new ArchiveError("size-mismatch", `inflates to ${received} bytes but declares ${declared}`, { member: member.name });
    return out;
  })();
  done.then(wake, (error: unknown) => {
    failure = error;
    wake();
  });
  return {
    bytes: out,
    done,
    available(end) {
      if (failure !== null) return Promise.reject(failure);
      if (Math.min(end, declared) <= received) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ end: Math.min(end, declared), resolve, reject }));
    },
  };
}

/** Bytes of compressed data handed to the inflater at a time. */
const INFLATE_PIECE_BYTES = 1 << 20;

/**
 * A deflated member's data (one range of the source) in pieces, in order: a Blob's is read a
 * piece at a time (a 10.7 MB member read whole held it, and the copies reading it makes, at once:
 * about 20 MB more at the import's peak).
 */
async function* compressedPieces(member: ZipMember, data: Ranges): AsyncGenerator<Uint8Array> {
  const start = member.entry.localDirectory!.dataOffset;
  const end = start + member.entry.compressedSize;
  for (let at = start; at < end; at += INFLATE_PIECE_BYTES) {
    const pieceEnd = Math.min(end, at + INFLATE_PIECE_BYTES);
    const piece = await data.read(at, pieceEnd, false);
    if (piece.length !== pieceEnd - at) throw new ArchiveError("truncated", "the entry's data runs past the end of the archive", { member: member.name });
    yield piece;
  }
}

/** How a deflated member is inflated and checked outside zip.js. */
interface Inflater {
  inflateRaw: InflateRaw;
  newCrc32: NewCrc32;
}

/** Inflates a deflated member's data into `sink`, checking its CRC-32. */
async function inflateRange(member: ZipMember, data: Ranges, { inflateRaw, newCrc32 }: Inflater, sink: WritableStream<Uint8Array>): Promise<void> {
  const { entry, name } = member;
  await entry.getData(new WritableStream(), { checkOverlappingEntryOnly: true, strictness: "strict" });
  const crc = await newCrc32();
  const inflater = inflateRaw();
  const input = inflater.writable.getWriter();
  const output = inflater.readable.getReader();
  const writer = sink.getWriter();
  const feeding = (async () => {
    try {
      for await (const piece of compressedPieces(member, data)) {
        await input.ready;
        await input.write(piece as Uint8Array<ArrayBuffer>);
      }
      await input.close();
    } catch (error) {
      // The reader below would wait for more data: fail it too.
      await input.abort(error).catch(() => {});
      throw error;
    }
  })();
  feeding.catch(() => {}); // its failure is the reader's too, reported below
  try {
    for (let next = await output.read(); !next.done; next = await output.read()) {
      crc.update(next.value);
      await writer.write(next.value);
    }
    await feeding;
  } catch (error) {
    void output.cancel().catch(() => {});
    void input.abort().catch(() => {});
    // A truncated source is reported as such, not as data that does not inflate.
    const fed = await feeding.then(
      () => null,
      (failure: unknown) => failure,
    );
    if (fed instanceof ArchiveError) throw fed;
    if (error instanceof ArchiveError) throw error;
    throw new ArchiveError("corrupt-data", `the compressed data does not inflate (${(error as Error)?.message ?? String(error)})`, { member: name, cause: error });
  }
  if (Number.parseInt(crc.hex(), 16) !== entry.crc32) throw new ArchiveError("crc", "CRC-32 of the data does not match the one stored", { member: name });
}

const ZIP_ERRORS: ReadonlyMap<string, [ArchiveErrorCode, string]> = new Map([
  [ERR_INVALID_CRC32, ["crc", "CRC-32 of the data does not match the one stored"]],
  [ERR_INVALID_UNCOMPRESSED_SIZE, ["size-mismatch", "inflates past its declared uncompressed size"]],
  [ERR_INVALID_COMPRESSED_DATA, ["corrupt-data", "the compressed data does not inflate"]],
  [ERR_ENTRY_DATA_OUT_OF_BOUNDS, ["truncated", "the entry's data runs past the end of the archive"]],
  [ERR_LOCAL_FILE_HEADER_NOT_FOUND, ["corrupt-data", "no local file header where the directory points"]],
  [ERR_OVERLAPPING_ENTRY, ["unsafe-entry", "the entry's data overlaps another entry (a zip bomb)"]],
  [ERR_AMBIGUOUS_ARCHIVE, ["ambiguous", "the archive reads differently in other tools"]],
]);

function toArchiveError(error: unknown, member: string | undefined, startsWithLocalHeader: boolean): unknown {
  if (error instanceof ArchiveError) return error;
  const message = (error as Error)?.message;
  if (message === ERR_EOCDR_NOT_FOUND || message === ERR_CENTRAL_DIRECTORY_NOT_FOUND) {
    return startsWithLocalHeader
      ? new ArchiveError("truncated", "the zip's central directory is missing: the file is truncated", { cause: error })
      : new ArchiveError("not-a-zip", "no zip central directory found", { cause: error });
  }
  const known = message === undefined ? undefined : ZIP_ERRORS.get(message);
  if (known) {
    const reason = (error as { reason?: unknown }).reason;
    return new ArchiveError(known[0], typeof reason === "string" ? `${known[1]} (${reason})` : known[1], { member, cause: error });
  }
  // Any other failure of zip.js to read the structure: not something we can import.
  return new ArchiveError(member === undefined ? "not-a-zip" : "corrupt-data", `unreadable zip (${message ?? String(error)})`, { member, cause: error });
}

async function bufferStream(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new ArchiveError("too-large", `the archive stream is over ${maxBytes} bytes (limit maxTotalBytes)`);
    }
    parts.push(value);
  }
  return concatAll(parts);
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}
