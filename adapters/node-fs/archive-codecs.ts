/**
 * Node's own codecs for the archive code (`importArchive`/`verifyArchive` options), where the
 * web APIs the core defaults to are slower in Node. Measured here on the archive benchmark's
 * session member (10.7 MB → 50.7 MB):
 * - inflate: Node's DecompressionStream inflates in zlib's 16 KiB default pieces, each a
 *   thread-pool round trip through the main thread (~3,100 of them): 250–340 ms, against
 *   77–95 ms with 1 MiB pieces. 512 KiB pieces: the import's peak RSS stays under its 150 MB cap
 *   over the process (bench: +130 MB, max +139; with 1 MiB +147, max +158) for an inflate of
 *   about 0.2 s instead of 0.18 s.
 * - SHA-256 of the member as it inflates: hash-wasm 150–160 ms, node:crypto (OpenSSL, SHA-NI
 *   where the CPU has it) 28 ms. `crypto.subtle` is as fast but copies its whole input.
 * - CRC-32 of that session in 1 MiB pieces: hash-wasm 26–28 ms, zlib.crc32 10–11 ms (on the
 *   main thread, every member's: the archive's 90.6 MB).
 * - deflate (export) of that session: one zlib stream 1,339 ms (zip.js's CompressionStream is one
 *   stream too); 4 MiB pieces deflated on the thread pool at once, 690 ms on 2 cores, the same size
 *   to 0.001 % (each piece primed with the 32 KiB before it, as pigz does).
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
