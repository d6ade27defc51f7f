/**
 * An entry proved valid from its line's bytes (format/message-line.ts) and not parsed yet: it holds
 * what the tree and the leaf need, and its line's bytes until `entry()` parses them, once.
 */
import { decodeRecord, type SessionDialect } from "./dialect.js";
import { ascii, type MessageLineHead } from "./message-line.js";
import type { SessionEntry } from "./types.js";

const decoder = new TextDecoder();

export class UnparsedEntry {
  readonly id: string;
  readonly parentId: string | null;
  /** The message's role. */
  readonly role: string;
  /** The 1-based line of the file it was read from. */
  readonly line: number;
  readonly #dialect: SessionDialect;
  /** The bytes holding the line (released once parsed). */
  #bytes: Uint8Array | null;
  readonly #start: number;
  readonly #end: number;
  readonly #timestampStart: number;
  readonly #timestampEnd: number;
  #entry: SessionEntry | null = null;

  constructor(head: MessageLineHead, line: number, dialect: SessionDialect, bytes: Uint8Array, start: number, end: number) {
    this.id = head.id;
    this.parentId = head.parentId;
    this.role = head.role;
    this.#timestampStart = head.timestampStart;
    this.#timestampEnd = head.timestampEnd;
    this.line = line;
    this.#dialect = dialect;
    this.#bytes = bytes;
    this.#start = start;
    this.#end = end;
  }

  /** On the prototype: one field less in each of the many entries. */
  get type(): "message" {
    return "message";
  }

  /** Read from the line's bytes when asked for (until it is parsed), not kept as a string per entry. */
  get timestamp(): string {
    return this.#entry ? this.#entry.timestamp : ascii(this.#bytes!, this.#timestampStart, this.#timestampEnd);
  }

  /** The entry, parsed from its line on the first call (the same object on every call). */
  entry(): SessionEntry {
    if (this.#entry) return this.#entry;
    const text = decoder.decode(this.#bytes!.subarray(this.#start, this.#end));
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`line ${this.line} was read as a valid entry but does not parse (${(error as Error).message}): a bug in format/message-line.ts`);
    }
    // A seed-003 message line has its timestamp, so completeSeed003Entry would change nothing.
    this.#entry = decodeRecord(this.#dialect, record) as unknown as SessionEntry;
    this.#bytes = null;
    return this.#entry;
  }
}
