/**
 * Byte helpers of the adapters. The core has its own `concatAll` (src/format/bytes.ts): adapters
 * import nothing from src/ but the port (test/node/layering.test.ts).
 */

/** The parts one after another, in a new buffer. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
