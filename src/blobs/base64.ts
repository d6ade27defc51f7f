/**
 * base64 without Node imports. Node's Buffer is used when the runtime has one (it is several times
 * faster); browsers get the table codec.
 */

interface BufferLike {
  from(data: string, encoding: "base64"): Uint8Array;
  from(data: Uint8Array): { toString(encoding: "base64"): string };
}
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;
DECODE["-".charCodeAt(0)] = 62; // url-safe variants decode too
DECODE["_".charCodeAt(0)] = 63;

export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes).toString("base64");
  const parts: string[] = [];
  const STEP = 3 * 8192;
  for (let start = 0; start < bytes.length; start += STEP) {
    let out = "";
    const end = Math.min(start + STEP, bytes.length);
    for (let i = start; i < end; i += 3) {
      const a = bytes[i]!;
      const b = i + 1 < end ? bytes[i + 1]! : 0;
      const c = i + 2 < end ? bytes[i + 2]! : 0;
      out += ALPHABET[a >> 2]! + ALPHABET[((a & 3) << 4) | (b >> 4)]!;
      out += i + 1 < end ? ALPHABET[((b & 15) << 2) | (c >> 6)]! : "=";
      out += i + 2 < end ? ALPHABET[c & 63]! : "=";
    }
    parts.push(out);
  }
  return parts.join("");
}

/** Decodes base64; returns null when `text` is not valid base64. */
export function base64ToBytes(text: string): Uint8Array | null {
  const clean = text.replace(/[\s=]+$/g, "").replace(/\s+/g, "");
  if (clean.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < clean.length; i++) {
    const code = clean.charCodeAt(i);
    const v = code < 128 ? DECODE[code]! : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}
