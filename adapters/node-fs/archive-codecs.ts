/**
 * Node's own codecs for the archive code (`importArchive`/`verifyArchive`/`exportArchive`
 * options), where the web APIs the core defaults to are slower in Node: zlib inflating in 512 KiB
 * pieces, node:crypto's SHA-256, zlib's CRC-32, and deflate in 4 MiB pieces on the thread pool.
 * Why each, against what: docs/DESIGN.md, "node-fs"; their speed and memory now: bench rows
 * `archive.importFloor.inflate`, `.sha256`, `.crc32`, `archive.export`, `archive.memory.import`.
 */
import { createHash } from "node:crypto";
import { Duplex } from "node:stream";
import { promisify } from "node:util";
import zlib from "node:zlib";

const PIECE_BYTES = 1 << 19;
const DEFLATE_PIECE_BYTES = 4 << 20;
/** Deflate's window: what a piece may refer back to. */
const WINDOW_BYTES = 32 << 10;
const deflateRaw = promisify(zlib.deflateRaw);

/** A raw-deflate decompressor (`DecompressionStream("deflate-raw")`'s job) on Node's zlib. */
export function nodeInflateRaw(): ReadableWritablePair<Uint8Array, Uint8Array<ArrayBuffer>> {
  return Duplex.toWeb(zlib.createInflateRaw({ chunkSize: PIECE_BYTES })) as unknown as ReadableWritablePair<Uint8Array, Uint8Array<ArrayBuffer>>;
}

/** An incremental SHA-256 on node:crypto: `update` piece by piece, then `hex` once. */
export function nodeSha256(): {
  /** Feeds the next piece of the input. */
  update(data: Uint8Array): void;
  /** The digest as lowercase hex; call it once, after the last piece. */
  hex(): string;
} {
  const hash = createHash("sha256");
  return {
    update: (data) => void hash.update(data),
    hex: () => hash.digest("hex"),
  };
}

/** An incremental CRC-32 on Node's zlib (`zlib.crc32`, native). */
export function nodeCrc32(): {
  /** Feeds the next piece of the input. */
  update(data: Uint8Array): void;
  /** The digest as lowercase hex; call it once, after the last piece. */
  hex(): string;
} {
  let value = 0;
  return {
    update: (data) => void (value = zlib.crc32(data, value)),
    hex: () => (value >>> 0).toString(16).padStart(8, "0"),
  };
}

/**
 * Raw deflate of a whole member (`exportArchive`'s `deflateSession`), its pieces compressed in
 * parallel on zlib's thread pool. Every piece but the last ends on a sync flush (byte-aligned, not
 * final), so the pieces in order are one valid deflate stream.
 */
export async function nodeDeflateSession(bytes: Uint8Array): Promise<Buffer[]> {
  const pieces: Promise<Buffer>[] = [];
  for (let start = 0; start < bytes.length || start === 0; start += DEFLATE_PIECE_BYTES) {
    const end = Math.min(bytes.length, start + DEFLATE_PIECE_BYTES);
    const options: zlib.ZlibOptions = { finishFlush: end === bytes.length ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH };
    if (start > 0) options.dictionary = bytes.subarray(Math.max(0, start - WINDOW_BYTES), start);
    pieces.push(deflateRaw(bytes.subarray(start, end), options));
  }
  return Promise.all(pieces);
}

/**
 * Node's codecs, as the archive options take them: `importArchive(storage, source, { ...nodeArchiveCodecs })`,
 * `exportArchive(storage, sessions, sink, { ...nodeArchiveCodecs })`.
 */
export const nodeArchiveCodecs = {
  /** {@link nodeInflateRaw}: the import's and verification's `inflateRaw`. */
  inflateRaw: nodeInflateRaw,
  /** {@link nodeSha256}: the archive options' `sha256`. */
  sha256: nodeSha256,
  /** {@link nodeCrc32}: the archive options' `crc32`. */
  crc32: nodeCrc32,
  /** {@link nodeDeflateSession}: the export's `deflateSession`. */
  deflateSession: nodeDeflateSession,
};
