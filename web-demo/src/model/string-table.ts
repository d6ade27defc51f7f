/**
 * Strings numbered in the order they were added, and found by their text, in typed arrays: the
 * characters of every string in one array, an open-addressing hash table of their numbers. A
 * million entry ids cost about 28 MB here, none of it objects the garbage collector walks (as a
 * Map of strings they were two million heap objects, and a full collection while scrolling a
 * million-entry session paused the page for 400 ms and more).
 */

const EMPTY = -1;

/** FNV-1a over the string's UTF-16 code units. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/** The same hash of code units kept in an array. */
function hashOf(chars: Uint16Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let k = start; k < end; k++) h = Math.imul(h ^ chars[k]!, 0x01000193);
  return h >>> 0;
}

/** Code units as a string, a slice at a time (fromCharCode takes a bounded number of arguments). */
const SLICE = 4096;

export class StringTable {
  /** The code units of every string, back to back; string k is chars[start[k], start[k + 1]). */
  #chars = new Uint16Array(1 << 12);
  #start = new Int32Array(257);
  #count = 0;
  /** String numbers by hash, EMPTY where free; at most half full. */
  #slots = new Int32Array(512).fill(EMPTY);

  get size(): number {
    return this.#count;
  }

  /** Adds `text` (which the table must not hold yet) as string number `size`; returns that number. */
  add(text: string): number {
    const k = this.#count;
    const start = this.#start[k]!;
    if (start + text.length > this.#chars.length) this.#chars = grow(this.#chars, start + text.length);
    for (let c = 0; c < text.length; c++) this.#chars[start + c] = text.charCodeAt(c);
    if (k + 2 > this.#start.length) this.#start = grow(this.#start, k + 2);
    this.#start[k + 1] = start + text.length;
    this.#count++;
    if (this.#count * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    else this.#insert(k, hash(text));
    return k;
  }

  /** The number of `text`, or -1. */
  indexOf(text: string): number {
    const mask = this.#slots.length - 1;
    for (let slot = hash(text) & mask; ; slot = (slot + 1) & mask) {
      const k = this.#slots[slot]!;
      if (k === EMPTY) return -1;
      if (this.#equals(k, text)) return k;
    }
  }

  /** String number `k`. */
  at(k: number): string {
    const start = this.#start[k]!;
    const end = this.#start[k + 1]!;
    let text = "";
    for (let from = start; from < end; from += SLICE) text += String.fromCharCode.apply(null, this.#chars.subarray(from, Math.min(end, from + SLICE)) as unknown as number[]);
    return text;
  }

  #equals(k: number, text: string): boolean {
    const start = this.#start[k]!;
    if (this.#start[k + 1]! - start !== text.length) return false;
    for (let c = 0; c < text.length; c++) if (this.#chars[start + c] !== text.charCodeAt(c)) return false;
    return true;
  }

  #insert(k: number, h: number): void {
    const mask = this.#slots.length - 1;
    let slot = h & mask;
    while (this.#slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.#slots[slot] = k;
  }

  #rehash(size: number): void {
    this.#slots = new Int32Array(size).fill(EMPTY);
    for (let k = 0; k < this.#count; k++) this.#insert(k, hashOf(this.#chars, this.#start[k]!, this.#start[k + 1]!));
  }
}

/** A copy of `array` with room for at least `needed` items (twice its length, or more). */
function grow<T extends Uint16Array | Int32Array>(array: T, needed: number): T {
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}
