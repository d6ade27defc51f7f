/** Ids as pi makes them: UUIDv7 session ids, 8-hex entry ids unique within a session. */

/** A UUIDv7 (time-ordered), as newer pi writes. */
export function createSessionId(now = Date.now()): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Random 32-bit words for entry ids, drawn 256 at a time: a `crypto.randomUUID()` per entry stood
 * out in the self time of the page's CPU profile of 10k appends (bench:browser
 * `profile.appends.indexeddb`), and the words cut SessionManager's own time for those appends
 * (row `appends10k.memoryPage`).
 */
const idWords = new Uint32Array(256);
let nextIdWord = idWords.length;

/**
 * 8 random hex chars, as pi's `randomUUID().slice(0, 8)` (those 8 chars of a UUIDv4 are all
 * random), retried on collision with `taken`.
 */
export function createEntryId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < 100; i++) {
    if (nextIdWord === idWords.length) {
      crypto.getRandomValues(idWords);
      nextIdWord = 0;
    }
    const id = idWords[nextIdWord++]!.toString(16).padStart(8, "0");
    if (!taken.has(id)) return id;
  }
  return crypto.randomUUID();
}
