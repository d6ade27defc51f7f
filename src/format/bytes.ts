/** Byte helpers shared by the readers and writers. */

export function concatAll(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const encoder = new TextEncoder();

/**
 * UTF-8 of small texts written often (a session's appends) into one buffer kept from call to
 * call: each result is a view the next call overwrites. `encodeInto` spares the new buffer
 * TextEncoder.encode makes per call, most of its cost in Chromium for a flush's entries (in a
 * worker between OPFS writes: bench:browser rows `appends10k.opfs` and
 * `appends10k.opfsSerializedFloor` include it; no row sets it against `encode`).
 */
export class ReusedEncodeBuffer {
  #buffer = new Uint8Array(0);

  constructor(private readonly maxChars: number) {}

  /** `text` as UTF-8: in the kept buffer up to `maxChars` characters, in a buffer of its own beyond. */
  encode(text: string): Uint8Array {
    if (text.length > this.maxChars) return encoder.encode(text);
    // A UTF-16 unit is at most 3 UTF-8 bytes.
    if (this.#buffer.length < text.length * 3) this.#buffer = new Uint8Array(Math.max(text.length * 3, 4096));
    return this.#buffer.subarray(0, encoder.encodeInto(text, this.#buffer).written);
  }
}
