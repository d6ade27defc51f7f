/**
 * Content-addressed blobs: `blobs/<sha256 of the bytes>`, written once, referenced from
 * session entries as "blob:sha256:<hex>".
 */
import { StorageError, type StoragePort } from "../port.js";

export const BLOB_REF_PREFIX = "blob:sha256:";
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Whether a record parsed from a line of a session file holds a blob ref: a string value in it,
 * at any depth, starts with the prefix. The line's text is tested first (cheap, and most lines
 * hold no ref); a ref spelled only with escapes (`\u0062lob:…`) is no ref sessionkit wrote and
 * is left as it is. The lazy reader (format/message-line.ts) sends every line that may hold one
 * through here, so both readers find the same entries.
 */
export function recordHoldsBlobRef(text: string, record: unknown): boolean {
  if (!text.includes(BLOB_REF_PREFIX)) return false;
  // A stack, not recursion: a line may nest thousands of levels deep.
  const stack: unknown[] = [record];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (value.startsWith(BLOB_REF_PREFIX)) return true;
    } else if (typeof value === "object" && value !== null) {
      for (const item of Object.values(value)) stack.push(item);
    }
  }
  return false;
}

/** The hash of a well-formed ref, else null (a ref never names a path outside blobs/). */
export function parseBlobRef(value: string): string | null {
  if (!value.startsWith(BLOB_REF_PREFIX)) return null;
  const hash = value.slice(BLOB_REF_PREFIX.length);
  return HEX64.test(hash) ? hash : null;
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

export class BlobStore {
  constructor(
    readonly storage: StoragePort,
    readonly dir = "blobs",
  ) {}

  pathOf(hash: string): string {
    return `${this.dir}/${hash}`;
  }

  /**
   * Stores `bytes` once; returns their ref. Always asks the storage (no cache): a blob may be
   * deleted with the last session that referenced it, by this process or another.
   */
  async put(bytes: Uint8Array): Promise<string> {
    const hash = await sha256Hex(bytes);
    const path = this.pathOf(hash);
    const existing = await this.storage.stat(path);
    if (existing?.size !== bytes.length) await this.storage.write(path, bytes);
    return BLOB_REF_PREFIX + hash;
  }

  /** The bytes of a ref, or null when the blob is missing. */
  async get(ref: string): Promise<Uint8Array | null> {
    const hash = parseBlobRef(ref);
    if (!hash) throw new StorageError("invalid", `not a blob ref: ${JSON.stringify(ref.slice(0, 80))}`);
    return this.storage.read(this.pathOf(hash));
  }

  async has(ref: string): Promise<boolean> {
    const hash = parseBlobRef(ref);
    return hash !== null && (await this.storage.stat(this.pathOf(hash))) !== null;
  }
}
