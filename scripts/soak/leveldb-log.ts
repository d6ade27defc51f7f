/**
 * Torn tails of LevelDB's logs, which Chromium's IndexedDB would otherwise turn into the loss of the
 * origin's whole database (docs/testing.md, "Crash soaks"). A SIGKILL can land while LevelDB
 * appends a record to its write-ahead log (`*.log`) or its `MANIFEST-*`: the file ends in part of
 * a record, whose write never returned, so no transaction depending on it completed. LevelDB's
 * recovery drops such a tail; but Chromium opens its LevelDBs with `reuse_logs` (everywhere but
 * ChromeOS, where it was turned off for IndexedDB's corruption rate, crbug.com/460568), and LevelDB
 * then appends to that log after the partial record (google/leveldb#1287, open). At the next open
 * the partial record is no longer at the end: its checksum fails, Chromium declares the database
 * corrupt, deletes it and opens an empty one (the page's upgradeneeded event says `dataLoss:
 * "total"`). Cutting the tail back to the last complete record before the relaunch removes only
 * bytes that recovery drops anyway, as LevelDB's proposed fix (google/leveldb#1336: no reuse of a
 * log ending in an incomplete record) would. OPFS keeps its directory in LevelDBs too (under
 * `File System`), so their logs are cut back the same way.
 *
 * The log format (LevelDB's doc/log_format.md): 32 KiB blocks of records, each a 7-byte header
 * (masked CRC-32C of type and payload, payload length, type) and its payload; a record that does
 * not fit its block is split into FIRST, MIDDLE… and LAST fragments; under 7 bytes left in a block
 * are zero padding.
 */
import { open, readdir, readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

const BLOCK_SIZE = 32_768;
const HEADER_SIZE = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** A log that did not end on a complete record, and what was done about it. */
export interface LogTail {
  file: string;
  size: number;
  /** Where the last complete record ends: what the file was cut back to when `trimmed`. */
  completeEnd: number;
  /** A record before the end whose checksum or framing is wrong: the log is corrupt there, and was left alone. */
  corruptAt: number | null;
  trimmed: boolean;
}

const CRC32C_TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  return crc;
});

function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** LevelDB stores checksums masked (rotated and offset), so that a CRC of data holding CRCs stays sound. */
function unmask(masked: number): number {
  const rotated = (masked - 0xa282ead8) >>> 0;
  return ((rotated >>> 17) | (rotated << 15)) >>> 0;
}

/** Walks `bytes` as a LevelDB log: the end of its last complete record, or where it is corrupt. */
export function scanLog(bytes: Uint8Array): { completeEnd: number; corruptAt: number | null } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let completeEnd = 0;
  let inFragments = false;
  let pos = 0;
  while (pos < bytes.length) {
    const leftInBlock = BLOCK_SIZE - (pos % BLOCK_SIZE);
    if (leftInBlock < HEADER_SIZE) {
      pos += leftInBlock; // the block's zero padding
      if (!inFragments) completeEnd = Math.min(pos, bytes.length);
      continue;
    }
    if (pos + HEADER_SIZE > bytes.length) break; // a torn header
    const length = view.getUint16(pos + 4, true);
    const type = bytes[pos + 6]!;
    if (pos + HEADER_SIZE + length > bytes.length) break; // a torn payload
    const framed = type === FULL || type === FIRST ? !inFragments : (type === MIDDLE || type === LAST) && inFragments;
    if (!framed || crc32c(bytes.subarray(pos + 6, pos + HEADER_SIZE + length)) !== unmask(view.getUint32(pos, true))) {
      return { completeEnd, corruptAt: pos };
    }
    pos += HEADER_SIZE + length;
    inFragments = type === FIRST || type === MIDDLE;
    if (!inFragments) completeEnd = pos;
  }
  return { completeEnd, corruptAt: null };
}

/**
 * Checks the logs of every LevelDB (a directory with a CURRENT file) under `roots` and cuts each
 * torn tail back to the last complete record, unless `trim` is false. Returns the logs that did
 * not end on a complete record or are corrupt.
 */
export async function trimTornLogTails(roots: readonly string[], trim = true): Promise<LogTail[]> {
  const found: LogTail[] = [];
  for (const root of roots) {
    const databases = (await readdir(root, { recursive: true }).catch(() => [])).filter((path) => basename(path) === "CURRENT").map((path) => join(root, dirname(path)));
    for (const database of databases) found.push(...(await trimDatabase(database, trim)));
  }
  return found;
}

async function trimDatabase(database: string, trim: boolean): Promise<LogTail[]> {
  const found: LogTail[] = [];
  const logs = (await readdir(database)).filter((name) => name.endsWith(".log") || name.startsWith("MANIFEST-"));
  for (const log of logs) {
    const file = join(database, log);
    const bytes = await readFile(file);
    const { completeEnd, corruptAt } = scanLog(bytes);
    if (corruptAt === null && completeEnd === bytes.length) continue;
    const trimmed = trim && corruptAt === null;
    if (trimmed) {
      const handle = await open(file, "r+");
      try {
        await handle.truncate(completeEnd);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    found.push({ file, size: bytes.length, completeEnd, corruptAt, trimmed });
  }
  return found;
}
