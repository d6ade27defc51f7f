/**
 * CRC-32 (IEEE 802.3, the zip one), eight bytes per step ("slicing-by-8", ~1 GB/s in V8): for
 * stored members, whose bytes are read directly instead of through zip.js's stream pipeline.
 */

/** TABLES[k][n]: the CRC of byte n followed by k zero bytes. Int32 values keep V8 on small integers. */
const TABLES: Int32Array[] = (() => {
  const tables = Array.from({ length: 8 }, () => new Int32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    tables[0]![n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) {
      const previous = tables[k - 1]![n]!;
      tables[k]![n] = (previous >>> 8) ^ tables[0]![previous & 0xff]!;
    }
  }
  return tables;
})();

/** The CRC-32 of `data`, unsigned, as zip headers store it. */
export function crc32(data: Uint8Array): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  let crc = -1;
  let offset = 0;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (const end = data.length - 8; offset <= end; offset += 8) {
    const a = crc ^ view.getInt32(offset, true);
    const b = view.getInt32(offset + 4, true);
    crc =
      t7[a & 0xff]! ^
      t6[(a >>> 8) & 0xff]! ^
      t5[(a >>> 16) & 0xff]! ^
      t4[a >>> 24]! ^
      t3[b & 0xff]! ^
      t2[(b >>> 8) & 0xff]! ^
      t1[(b >>> 16) & 0xff]! ^
      t0[b >>> 24]!;
  }
  for (; offset < data.length; offset++) crc = (crc >>> 8) ^ t0[(crc ^ data[offset]!) & 0xff]!;
  return ~crc >>> 0;
}
