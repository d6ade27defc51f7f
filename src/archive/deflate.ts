/**
 * A member deflated by us rather than by zip.js, so it can start before the member's place in
 * the zip comes (the manifest, written first, is not known until every session is read) and zip.js
 * only copies it (`passThrough`). `CompressionStream("deflate-raw")` at zlib's default level 6, as
 * zip.js and `zip` use; in Node it runs on the thread pool, so the caller's own work on the bytes
 * (reading lines, hashing) overlaps it.
 */
import { concatAll } from "../format/bytes.js";
import { crc32Incremental, sha256Incremental, type IncrementalHash } from "./hashes.js";

export interface DeflatedMember {
  compressed: Uint8Array;
  /** CRC-32 of the uncompressed bytes, as the zip headers store it. */
  crc32: number;
  uncompressedSize: number;
  /** SHA-256 (hex) of the uncompressed bytes, when asked for: hashed as they are fed, no copy. */
  sha256?: string;
}

/** Bytes handed to the compressor at a time (views, not copies). */
const PIECE_BYTES = 1 << 20;

export interface Deflating {
  done: Promise<DeflatedMember>;
  /** Stops a deflate whose result is not wanted after all; `done` then rejects. */
  cancel(): void;
}

export function deflateMember(bytes: Uint8Array, options: { sha256?: boolean } = {}): Deflating {
  const stream = new CompressionStream("deflate-raw");
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  let cancelled = false;
  const feed = async () => {
    const crc = await crc32Incremental();
    const sha: IncrementalHash | undefined = options.sha256 ? await sha256Incremental() : undefined;
    for (let offset = 0; offset < bytes.length && !cancelled; offset += PIECE_BYTES) {
      const piece = bytes.subarray(offset, offset + PIECE_BYTES);
      await writer.ready;
      const written = writer.write(piece as Uint8Array<ArrayBuffer>);
      // Hashed while the compressor works on the piece.
      crc.update(piece);
      sha?.update(piece);
      await written;
    }
    if (cancelled) throw new Error("deflate cancelled");
    await writer.close();
    return { crc32: Number.parseInt(crc.hex(), 16), ...(sha ? { sha256: sha.hex() } : {}) };
  };
  const drain = async () => {
    const parts: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value);
    return concatAll(parts);
  };
  const fed = feed();
  const drained = drain();
  const done = Promise.all([fed, drained]).then(([hashes, compressed]) => ({ compressed, uncompressedSize: bytes.length, ...hashes }));
  done.catch(() => {});
  return {
    done,
    cancel() {
      if (cancelled) return;
      cancelled = true;
      void writer.abort(new Error("deflate cancelled")).catch(() => {});
      void reader.cancel().catch(() => {});
    },
  };
}
