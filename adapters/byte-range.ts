/** Validation and clamping of the optional byte range of `StoragePort.read`. */
import { StorageError, type ByteRange } from "../src/port.js";

/** Throws StorageError "invalid" unless the range has a non-negative integer offset and length. */
export function checkByteRange(path: string, range: ByteRange | undefined): void {
  if (range === undefined) return;
  const { offset, length } = range;
  const validOffset = Number.isSafeInteger(offset) && offset >= 0;
  const validLength = length === undefined || (Number.isSafeInteger(length) && length >= 0);
  if (!validOffset || !validLength) {
    throw new StorageError("invalid", `invalid byte range ${JSON.stringify(range)} for ${JSON.stringify(path)}`, { path });
  }
}

/** The [start, end) byte positions a range covers in a file of `size` bytes. */
export function clampByteRange(range: ByteRange | undefined, size: number): [number, number] {
  if (range === undefined) return [0, size];
  const start = Math.min(range.offset, size);
  return [start, range.length === undefined ? size : Math.min(size, start + range.length)];
}
