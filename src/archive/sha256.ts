/**
 * Incremental SHA-256 (FIPS 180-4) in plain TypeScript. `crypto.subtle.digest` is one-shot and
 * copies its input, so hashing a 50 MB member with it holds the member twice; this hashes chunks
 * as they are read or inflated, with no copy. It is ~4× slower than the native one (~200 MB/s
 * against ~850 MB/s): import uses it for sessions, which are large; blobs (~200 KB) and export
 * (which holds one member anyway) use crypto.subtle.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const BLOCK = 64;

export class Sha256 {
  readonly #state = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  readonly #schedule = new Int32Array(64);
  /** Bytes of an unfinished block, carried to the next update. */
  readonly #pending = new Uint8Array(BLOCK);
  #pendingLength = 0;
  #length = 0;
  #finished = false;

  update(data: Uint8Array): this {
    if (this.#finished) throw new Error("Sha256: update after digest");
    this.#length += data.length;
    let offset = 0;
    if (this.#pendingLength > 0) {
      offset = Math.min(BLOCK - this.#pendingLength, data.length);
      this.#pending.set(data.subarray(0, offset), this.#pendingLength);
      this.#pendingLength += offset;
      if (this.#pendingLength < BLOCK) return this;
      compress(this.#state, this.#schedule, this.#pending, 0, BLOCK);
      this.#pendingLength = 0;
    }
    const whole = offset + ((data.length - offset) & ~(BLOCK - 1));
    if (whole > offset) compress(this.#state, this.#schedule, data, offset, whole);
    if (whole < data.length) {
      this.#pending.set(data.subarray(whole));
      this.#pendingLength = data.length - whole;
    }
    return this;
  }

  /** The digest as lowercase hex; the hash takes no more data after it. */
  hex(): string {
    const bits = this.#length * 8;
    const padding = new Uint8Array((this.#pendingLength < 56 ? 64 : 128) - this.#pendingLength);
    padding[0] = 0x80;
    const view = new DataView(padding.buffer);
    view.setUint32(padding.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(padding.length - 4, bits >>> 0);
    this.update(padding);
    this.#finished = true;
    let hex = "";
    for (const word of this.#state) hex += (word >>> 0).toString(16).padStart(8, "0");
    return hex;
  }
}

/**
 * Compresses the whole blocks of `data[start, end)` into `state`; `w` is scratch space. Written out
 * by hand: helper functions for the rotations exhaust V8's inlining budget (2× slower), and eight
 * rounds per pass with the working variables renamed instead of shifted are ~1.35× faster. Each
 * round: T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]; d += T1; h = T1 + Σ0(a) + Maj(a, b, c).
 */
function compress(state: Int32Array, w: Int32Array, data: Uint8Array, start: number, end: number): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let h0 = state[0]!, h1 = state[1]!, h2 = state[2]!, h3 = state[3]!, h4 = state[4]!, h5 = state[5]!, h6 = state[6]!, h7 = state[7]!;
  for (let p = start; p < end; p += BLOCK) {
    for (let t = 0; t < 16; t++) w[t] = view.getInt32(p + (t << 2));
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15]!;
      const y = w[t - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t += 8) {
      let t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + (g ^ (e & (f ^ g))) + K[t]! + w[t]!) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) | (c & (a | b)))) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) + (f ^ (d & (e ^ f))) + K[t + 1]! + w[t + 1]!) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) + ((h & a) | (b & (h | a)))) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) + (e ^ (c & (d ^ e))) + K[t + 2]! + w[t + 2]!) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) + ((g & h) | (a & (g | h)))) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) + (d ^ (b & (c ^ d))) + K[t + 3]! + w[t + 3]!) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) + ((f & g) | (h & (f | g)))) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) + (c ^ (a & (b ^ c))) + K[t + 4]! + w[t + 4]!) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) + ((e & f) | (g & (e | f)))) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) + (b ^ (h & (a ^ b))) + K[t + 5]! + w[t + 5]!) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) + ((d & e) | (f & (d | e)))) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) + (a ^ (g & (h ^ a))) + K[t + 6]! + w[t + 6]!) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) + ((c & d) | (e & (c | d)))) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) + (h ^ (f & (g ^ h))) + K[t + 7]! + w[t + 7]!) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) + ((b & c) | (d & (b | c)))) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  state[0] = h0;
  state[1] = h1;
  state[2] = h2;
  state[3] = h3;
  state[4] = h4;
  state[5] = h5;
  state[6] = h6;
  state[7] = h7;
}
