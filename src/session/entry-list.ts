/**
 * A session's entries in file order and by id, some of them possibly not parsed yet (read lazily,
 * format/lazy-session-file.ts): the tree, the path and the leaf work on heads (type, id, parentId,
 * timestamp, a message's role); a whole entry is parsed when first asked for and kept.
 */
import { UnparsedEntry } from "../format/unparsed-entry.js";
import { entryOf, type LazyEntry } from "../format/lazy-session-file.js";
import type { SessionEntry } from "../format/types.js";
import type { EntrySource } from "./context.js";

export class EntryList implements EntrySource<LazyEntry> {
  readonly #heads: LazyEntry[] = [];
  readonly #byId = new Map<string, LazyEntry>();

  /** In file order. */
  get heads(): readonly LazyEntry[] {
    return this.#heads;
  }
  /** The last entry with each id. */
  get byId(): ReadonlyMap<string, LazyEntry> {
    return this.#byId;
  }
  get length(): number {
    return this.#heads.length;
  }

  push(entry: LazyEntry): void {
    this.#heads.push(entry);
    this.#byId.set(entry.id, entry);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The whole entry of a head. */
  entry(head: LazyEntry): SessionEntry {
    return entryOf(head);
  }

  role(head: LazyEntry): string | undefined {
    if (head instanceof UnparsedEntry) return head.role;
    return head.type === "message" ? head.message?.role : undefined;
  }

  at(index: number): SessionEntry {
    return this.entry(this.#heads[index]!);
  }

  get(id: string): SessionEntry | undefined {
    const head = this.#byId.get(id);
    return head && this.entry(head);
  }

  /** Puts `entry` at `index` (its id then names it). */
  set(index: number, entry: SessionEntry): void {
    this.#heads[index] = entry;
    this.#byId.set(entry.id, entry);
  }

  /** Every entry, in file order (a new array). */
  all(): SessionEntry[] {
    return this.#heads.map((head) => this.entry(head));
  }
}
