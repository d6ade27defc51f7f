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
 */
import { createHash } from "node:crypto";
import { Duplex } from "node:stream";
import zlib from "node:zlib";

const PIECE_BYTES = 1 << 19;

/** A raw-deflate decompressor (`DecompressionStream("deflate-raw")`'s job) on Node's zlib. */
export function nodeInflateRaw(): ReadableWritablePair<Uint8Array, Uint8Array<ArrayBuffer>> {
  return Duplex.toWeb(zlib.createInflateRaw({ chunkSize: PIECE_BYTES })) as unknown as ReadableWritablePair<Uint8Array, Uint8Array<ArrayBuffer>>;
}

/** An incremental SHA-256 on node:crypto: `update` piece by piece, then `hex` once. */
export function nodeSha256(): { update(data: Uint8Array): void; hex(): string } {
  const hash = createHash("sha256");
  return {
    update: (data) => void hash.update(data),
    hex: () => hash.digest("hex"),
  };
}

/** Both, as the archive options take them: `importArchive(storage, source, { ...nodeArchiveCodecs })`. */
export const nodeArchiveCodecs = { inflateRaw: nodeInflateRaw, sha256: nodeSha256 };
