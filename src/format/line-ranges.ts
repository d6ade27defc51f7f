/**
 * A JSONL file's complete lines, read range by range: the core's lazy reader
 * (lazy-session-file.ts) and the viewer's loader (web-demo/src/data/load-session.ts) both index
 * a file this way. Ranges are asked for ahead while earlier ones are handled (a port's read is a
 * round trip: a file opened, read and closed on another thread, or a request to a server), but
 * only within the size the file had, so no read is made that is not needed; a file that grew
 * since is read on, one range at a time. A line cut by a range's end is handed over whole, in a
 * range of its own, once the range with its "\n" has arrived.
 */
import type { StoragePort } from "../port.js";
import { concatAll } from "./bytes.js";

const NEWLINE = 0x0a;

export interface LineRangesOptions {
  /** The file's size when reading starts (its stat): ranges within it are asked for ahead. */
  size: number;
  /** Bytes per read. */
  rangeBytes: number;
  /** Reads asked for before the range being handled is done. */
  readAhead: number;
  /** The file offset to start at, a line's start (a file read on from where an earlier pass stopped); default 0. */
  start?: number;
  /**
   * Handles the lines of `bytes` from `from` (file offset `offset`) up to its last "\n" and
   * returns where the unfinished last line starts (`bytes.length` when there is none).
   */
  onLines(bytes: Uint8Array, from: number, offset: number): number | Promise<number>;
  /** Called as each read arrives, before its lines are handled: throwing stops the reading. */
  onRead?(): void;
  /** Called once a range's lines are handled, with the offset of the first byte not yet part of a handled line. */
  onRange?(handledBytes: number): void;
  /** True once the reader wants no more lines (it hands the file to another reader). */
  stopped(): boolean;
}

export interface LineRanges {
  /** The file was not there when its first range was read. */
  missing: boolean;
  /** Bytes up to the end of the last complete line handled. */
  completeBytes: number;
  /** What follows the last "\n": an unfinished last line (a crash mid-append), or null. */
  tail: Uint8Array | null;
}

/** Reads `path` range by range and hands its complete lines to `options.onLines` (see the module comment). */
export async function readLineRanges(storage: StoragePort, path: string, options: LineRangesOptions): Promise<LineRanges> {
  const { size, rangeBytes } = options;
  const reads: Array<Promise<Uint8Array | null>> = [];
  const start = options.start ?? 0;
  let requested = start;
  const readAhead = () => {
    reads.push(storage.read(path, { offset: requested, length: rangeBytes }));
    requested += rangeBytes;
  };
  readAhead();
  /** File offset of the first byte not yet part of a handled line. */
  let lineStart = start;
  let carry: Uint8Array[] = [];
  let missing = false;
  try {
    while (reads.length > 0 && !options.stopped()) {
      while (reads.length < options.readAhead && requested < size) readAhead();
      const chunk = await reads.shift()!;
      options.onRead?.();
      if (chunk === null) {
        missing = lineStart === start && carry.length === 0;
        break;
      }
      if (chunk.length === 0) break;
      const last = chunk.length < rangeBytes;
      if (!last && reads.length === 0) readAhead();
      let from = 0;
      if (carry.length > 0) {
        const newline = chunk.indexOf(NEWLINE);
        if (newline < 0) {
          carry.push(chunk);
          if (last) break;
          continue;
        }
        // The line that started in an earlier range, with its "\n": a range of its own.
        const joined = concatAll([...carry, chunk.subarray(0, newline + 1)]);
        carry = [];
        await options.onLines(joined, 0, lineStart);
        lineStart += joined.length;
        from = newline + 1;
      }
      const rest = await options.onLines(chunk, from, lineStart);
      lineStart += rest - from;
      if (rest < chunk.length) carry.push(chunk.subarray(rest));
      options.onRange?.(lineStart);
      if (last) break;
    }
    // Ranges still asked for (the file shrank, or the reader stopped): their failures count too.
    await Promise.all(reads.splice(0));
  } finally {
    for (const read of reads) read.catch(() => {});
  }
  return { missing, completeBytes: lineStart, tail: carry.length > 0 ? concatAll(carry) : null };
}
