/**
 * Replays a SQLite write-ahead log onto a copy of its database file, as SQLite does when it opens
 * the pair: frames up to the last valid commit, each counted only when its salts match the log's
 * header and its running checksum is right. oh-my-pi keeps history.db in WAL mode, so its newest
 * prompts are often only in history.db-wal. The result is a plain image to open read-only in
 * memory (docs/DESIGN.md §8). Format: https://www.sqlite.org/fileformat2.html#the_write_ahead_log
 */

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

function checksum(data: Uint8Array, bigEndian: boolean, s0: number, s1: number): [number, number] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i + 8 <= data.length; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/** The database image with the log's committed frames applied; `db` unchanged when the log holds none. */
export function applyWal(db: Uint8Array, wal: Uint8Array): Uint8Array {
  if (wal.length < WAL_HEADER) return db;
  const header = new DataView(wal.buffer, wal.byteOffset, WAL_HEADER);
  const magic = header.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return db;
  const bigEndian = (magic & 1) === 1;
  const pageSize = header.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return db;
  const salt1 = header.getUint32(16);
  const salt2 = header.getUint32(20);
  let [s0, s1] = checksum(wal.subarray(0, 24), bigEndian, 0, 0);
  if (s0 !== header.getUint32(24) || s1 !== header.getUint32(28)) return db;

  const pages = new Map<number, Uint8Array>();
  let committed = new Map<number, Uint8Array>();
  let committedSize = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    const frame = new DataView(wal.buffer, wal.byteOffset + at, FRAME_HEADER);
    if (frame.getUint32(8) !== salt1 || frame.getUint32(12) !== salt2) break;
    const page = wal.subarray(at + FRAME_HEADER, at + FRAME_HEADER + pageSize);
    [s0, s1] = checksum(wal.subarray(at, at + 8), bigEndian, s0, s1);
    [s0, s1] = checksum(page, bigEndian, s0, s1);
    if (s0 !== frame.getUint32(16) || s1 !== frame.getUint32(20)) break;
    pages.set(frame.getUint32(0), page);
    const sizeAfterCommit = frame.getUint32(4);
    if (sizeAfterCommit !== 0) {
      committed = new Map(pages);
      committedSize = sizeAfterCommit;
    }
  }
  if (committedSize === 0) return db;
  const image = new Uint8Array(committedSize * pageSize);
  image.set(db.subarray(0, Math.min(db.length, image.length)));
  for (const [pageNumber, page] of committed) if (pageNumber <= committedSize) image.set(page, (pageNumber - 1) * pageSize);
  // Header bytes 18/19 (write/read format): 1 = rollback journal, so an in-memory open needs no log.
  image[18] = 1;
  image[19] = 1;
  return image;
}

/** Marks a database image as rollback-journal mode (a WAL-mode file opens in memory without its log). */
export function withoutWalMode(db: Uint8Array): Uint8Array {
  if (db.length < 100 || (db[18] !== 2 && db[19] !== 2)) return db;
  const copy = db.slice();
  copy[18] = 1;
  copy[19] = 1;
  return copy;
}
