/**
 * One session, indexed for viewing: entries by id, children (oldest first, as pi sorts them),
 * labels, tool calls paired with their results, subtree sizes and the header figures. Built in
 * O(entries); `append` extends it for a session that grows while it is watched.
 *
 * Entries are numbered in file order and the tree is kept in typed arrays (parent, only child,
 * flags), with arrays only for the few entries that branch: a session is laid out again (filter,
 * search, fold) without building an object per entry. Most entries are not parsed at all: a
 * message line the core proved valid from its bytes (format/message-line.ts) joins as a
 * `LineEntry` (its id, parent, role, where its bytes are, and what line-skim.ts read of it), and
 * `entry(i)` parses it when something shows it, as the core's lazy entries are (docs/DESIGN.md
 * §3). The model keeps the bytes (the ranges the loader read) and the entries it was given parsed.
 */
import type { MessageEntry, SessionEntry, SessionHeader } from "../../../src/format/types.js";
import { decodeRecord, type SessionDialect } from "../../../src/format/dialect.js";
import { addUsage, type CostCounts, type TokenCounts } from "../../../src/insights/usage.js";
import { assistantFacts, type AssistantFacts } from "../data/line-skim.js";
import { StringTable } from "./string-table.js";

export interface ToolCallInfo {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The assistant entry holding the call. */
  entryId: string;
}

export interface SessionStats {
  userMessages: number;
  assistantMessages: number;
  toolResults: number;
  customMessages: number;
  compactions: number;
  branchSummaries: number;
  toolCalls: number;
  tokens: TokenCounts;
  cost: CostCounts;
  models: string[];
  firstTimestamp: string | undefined;
  lastTimestamp: string | undefined;
}

/** A message line kept unparsed: where its bytes are and what the index needs of it. */
export class LineEntry {
  /** An assistant message's facts. */
  assistant: AssistantFacts | undefined;
  /** A tool result's call. */
  toolCallId: string | undefined;

  constructor(
    readonly id: string,
    readonly parentId: string | null,
    readonly role: string,
    /** A range given to `addBytes` (its number), and the line's place in it ("\n" excluded). */
    readonly bytes: number,
    readonly start: number,
    readonly end: number,
    /** Where the timestamp's characters are in the range (printable ASCII). */
    readonly timestampStart: number,
    readonly timestampEnd: number,
  ) {}
}

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;

const emptyStats = (): SessionStats => ({
  userMessages: 0,
  assistantMessages: 0,
  toolResults: 0,
  customMessages: 0,
  compactions: 0,
  branchSummaries: 0,
  toolCalls: 0,
  tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  models: [],
  firstTimestamp: undefined,
  lastTimestamp: undefined,
});

/** Per-entry bits, for filters and lists that run over every entry. */
export const EntryFlag = {
  /** label, custom, model_change, thinking_level_change: hidden by the default filter. */
  Settings: 1,
  ToolResult: 2,
  User: 4,
  /** An assistant message with tool calls and no text that did not fail: the tree hides it. */
  ToolOnly: 8,
  /** Not in the message list: labels, custom records, names, leaf moves, custom messages not displayed. */
  Unlisted: 16,
  /** A tool result whose call the session holds: the message list shows it with the call. */
  Paired: 32,
  Assistant: 64,
  /** Not a message entry (compaction, model change, …). */
  NotMessage: 128,
} as const;

const SETTINGS_TYPES = new Set(["label", "custom", "model_change", "thinking_level_change", "leaf"]);
const UNLISTED_TYPES = new Set(["label", "custom", "session_info", "leaf"]);
const NONE = -1;
const MANY = -2;
/**
 * Entries parsed on demand stay parsed while they are among the last 1,024 to 2,048 asked for (the
 * ones on screen, and a margin): the same object while shown. Two generations of a Map, not one
 * Map in use order: taking a Map's oldest key walks past every key deleted before it.
 */
const RECENTLY_PARSED = 1024;

const lineDecoder = new TextDecoder();

export class SessionModel {
  readonly header: SessionHeader;
  readonly dialect: SessionDialect;
  /** Entry ids, numbered in file order (entry i is id i). */
  readonly #ids = new StringTable();
  #parent = new Int32Array(1024);
  /** The only child, NONE, or MANY (then in #many). */
  #onlyChild = new Int32Array(1024);
  #flags = new Uint8Array(1024);
  /** Where an unparsed entry's line is: range number (NONE: the entry is in #kept), start, end. */
  #range = new Int32Array(1024);
  #start = new Int32Array(1024);
  #end = new Int32Array(1024);
  readonly #ranges: Uint8Array[] = [];
  /** Entries given parsed (lines the core could not prove, followed entries), by number. */
  readonly #kept = new Map<number, SessionEntry>();
  /** Entries parsed on demand: asked for lately, and before that. */
  #recent = new Map<number, SessionEntry>();
  #older = new Map<number, SessionEntry>();
  readonly #many = new Map<number, number[]>();
  readonly #roots: number[] = [];
  /** Entries whose parent has not been seen yet (out of file order), by the parent's id. */
  readonly #waitingFor = new Map<string, number[]>();
  readonly labels = new Map<string, string>();
  /** Tool call ids, and by their number the assistant entry holding the call and the result answering it (NONE: none seen). */
  readonly #callIds = new StringTable();
  #callEntry = new Int32Array(256);
  #resultEntry = new Int32Array(256);
  /** Results whose call has not been seen yet, by call id. */
  readonly #unpaired = new Map<string, number[]>();
  readonly stats: SessionStats = emptyStats();
  #models = new Set<string>();
  #subtreeSizes: Int32Array | null = null;
  #name: string | undefined;
  #leafId: string | null = null;
  /** The last entry with a timestamp: its line, or its timestamp. */
  #lastStamped: LineEntry | string | null = null;

  constructor(header: SessionHeader, entries: readonly SessionEntry[] = [], dialect: SessionDialect = "pi") {
    this.header = header;
    this.dialect = dialect;
    this.append(entries);
  }

  get size(): number {
    return this.#ids.size;
  }

  /** The leaf the file leaves: its last entry, or where seed 003's last `leaf` entry points. */
  get fileLeafId(): string | null {
    return this.#leafId;
  }

  /** Keeps a range of the file read by the loader: LineEntry.bytes names it by the number returned. */
  addBytes(bytes: Uint8Array): number {
    this.#ranges.push(bytes);
    return this.#ranges.length - 1;
  }

  /**
   * Adds entries, in file order: parsed ones, and message lines left unparsed. An id seen already
   * is skipped. Returns the numbers of the entries added.
   */
  append(items: readonly (SessionEntry | LineEntry)[]): number[] {
    const added: number[] = [];
    this.#reserve(this.#ids.size + items.length);
    const sortLater = new Set<number>();
    for (const item of items) {
      if (this.#ids.indexOf(item.id) >= 0) continue;
      const i = this.#ids.add(item.id);
      added.push(i);
      this.#onlyChild[i] = NONE;
      if (item instanceof LineEntry) {
        this.#range[i] = item.bytes;
        this.#start[i] = item.start;
        this.#end[i] = item.end;
        this.#flags[i] = this.#countLine(item, i);
        this.#lastStamped = item;
        this.#leafId = item.id;
      } else {
        this.#range[i] = NONE;
        this.#kept.set(i, item);
        this.#flags[i] = this.#count(item, i);
        if (typeof item.timestamp === "string") this.#lastStamped = item.timestamp;
        // seed 003's durable navigation: a leaf entry moves the leaf to its target (when known).
        if (item.type === "leaf") {
          if (typeof item.targetId === "string" && this.has(item.targetId)) this.#leafId = item.targetId;
        } else this.#leafId = item.id;
      }
      if (this.stats.firstTimestamp === undefined && this.#lastStamped !== null) this.stats.firstTimestamp = this.#timestampOf(this.#lastStamped);
      const parentId = item.parentId;
      const parent = parentId === null || parentId === undefined || parentId === item.id ? undefined : this.indexOf(parentId);
      if (parent !== undefined) this.#attach(i, parent, sortLater);
      else {
        this.#parent[i] = NONE;
        this.#roots.push(i);
        if (parentId !== null && parentId !== undefined && parentId !== item.id) {
          const waiting = this.#waitingFor.get(parentId) ?? [];
          waiting.push(i);
          this.#waitingFor.set(parentId, waiting);
        }
      }
      // Children that came before their parent (rare, out-of-order files) are re-homed now,
      // as the core's buildTree looks parents up among all entries.
      const orphans = this.#waitingFor.get(item.id);
      if (orphans) {
        this.#waitingFor.delete(item.id);
        for (const orphan of orphans) {
          this.#roots.splice(this.#roots.indexOf(orphan), 1);
          this.#attach(orphan, i, sortLater);
        }
      }
    }
    for (const parent of sortLater) this.#many.get(parent)!.sort((a, b) => this.#time(a) - this.#time(b));
    if (added.length > 0) {
      this.#subtreeSizes = null;
      if (this.#lastStamped !== null) this.stats.lastTimestamp = this.#timestampOf(this.#lastStamped);
    }
    this.stats.models = [...this.#models];
    return added;
  }

  #timestampOf(stamped: LineEntry | string): string {
    return typeof stamped === "string" ? stamped : lineDecoder.decode(this.#ranges[stamped.bytes]!.subarray(stamped.timestampStart, stamped.timestampEnd));
  }

  #time(i: number): number {
    return Date.parse(this.entry(i).timestamp);
  }

  #attach(child: number, parent: number, sortLater: Set<number>): void {
    this.#parent[child] = parent;
    const only = this.#onlyChild[parent]!;
    if (only === NONE) this.#onlyChild[parent] = child;
    else if (only === MANY) {
      this.#many.get(parent)!.push(child);
      sortLater.add(parent);
    } else {
      this.#onlyChild[parent] = MANY;
      this.#many.set(parent, [only, child]);
      sortLater.add(parent);
    }
  }

  #reserve(capacity: number): void {
    if (capacity <= this.#parent.length) return;
    const size = Math.max(capacity, this.#parent.length * 2);
    const grow = <T extends Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    const int32 = (n: number) => new Int32Array(n);
    this.#parent = grow(this.#parent, int32);
    this.#onlyChild = grow(this.#onlyChild, int32);
    this.#range = grow(this.#range, int32);
    this.#start = grow(this.#start, int32);
    this.#end = grow(this.#end, int32);
    this.#flags = grow(this.#flags, (n) => new Uint8Array(n));
  }

  // --- by number (file order) --------------------------------------------------------------

  indexOf(id: string): number | undefined {
    const i = this.#ids.indexOf(id);
    return i < 0 ? undefined : i;
  }
  id(i: number): string {
    return this.#ids.at(i);
  }
  /** The parent's number, or -1 for a root. */
  parentIndex(i: number): number {
    return this.#parent[i]!;
  }
  flags(i: number): number {
    return this.#flags[i]!;
  }
  rootIndexes(): readonly number[] {
    return this.#roots;
  }
  childCount(i: number): number {
    const only = this.#onlyChild[i]!;
    return only === NONE ? 0 : only === MANY ? this.#many.get(i)!.length : 1;
  }
  /** Children, oldest first. */
  childIndexes(i: number): readonly number[] {
    const only = this.#onlyChild[i]!;
    return only === NONE ? [] : only === MANY ? this.#many.get(i)! : [only];
  }
  /** The only child, -1 for none, -2 for several (see childIndexes). */
  onlyChild(i: number): number {
    return this.#onlyChild[i]!;
  }

  /** Whether the message list shows entry `i` (tool results are shown with their call). */
  listed(i: number): boolean {
    const flags = this.#flags[i]!;
    return (flags & EntryFlag.Unlisted) === 0 && (flags & (EntryFlag.ToolResult | EntryFlag.Paired)) !== (EntryFlag.ToolResult | EntryFlag.Paired);
  }

  /** Entry `i`, parsed now if it was not (and kept a while: RECENTLY_PARSED). */
  entry(i: number): SessionEntry {
    const known = this.#kept.get(i) ?? this.#recent.get(i);
    if (known) return known;
    const entry = this.#older.get(i) ?? this.#parseLine(i);
    if (this.#recent.size >= RECENTLY_PARSED) {
      this.#older = this.#recent;
      this.#recent = new Map();
    }
    this.#recent.set(i, entry);
    return entry;
  }

  /** Entry `i` for a pass over many entries (search, secrets, exports): parsed, and not kept. */
  peek(i: number): SessionEntry {
    return this.#kept.get(i) ?? this.#recent.get(i) ?? this.#older.get(i) ?? this.#parseLine(i);
  }

  /** The line of an entry not parsed yet, as written (its JSON text); null for an entry kept parsed. */
  lineText(i: number): string | null {
    if (this.#kept.has(i) || this.#recent.has(i) || this.#older.has(i)) return null;
    return lineDecoder.decode(this.#ranges[this.#range[i]!]!.subarray(this.#start[i], this.#end[i]));
  }

  /** Every entry, parsed, in file order (not kept: for an export or a download). */
  allEntries(): SessionEntry[] {
    return Array.from({ length: this.size }, (_, i) => this.peek(i));
  }

  #parseLine(i: number): SessionEntry {
    const bytes = this.#ranges[this.#range[i]!]!.subarray(this.#start[i], this.#end[i]);
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(lineDecoder.decode(bytes)) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`entry ${this.id(i)} was read as a valid line but does not parse (${(error as Error).message}): a bug in the viewer's reader`);
    }
    return (this.dialect === "pi" ? record : decodeRecord(this.dialect, record)) as unknown as SessionEntry;
  }

  // --- by id ---------------------------------------------------------------------------------

  has(id: string): boolean {
    return this.#ids.indexOf(id) >= 0;
  }

  getEntry(id: string): SessionEntry | undefined {
    const i = this.indexOf(id);
    return i === undefined ? undefined : this.entry(i);
  }

  childrenOf(id: string): SessionEntry[] {
    const i = this.indexOf(id);
    return i === undefined ? [] : this.childIndexes(i).map((c) => this.entry(c));
  }

  /** Whether the session holds a tool call with this id. */
  hasToolCall(callId: string): boolean {
    const call = this.#callIds.indexOf(callId);
    return call >= 0 && this.#callEntry[call] !== NONE;
  }

  /** The tool call with this id (read from its assistant entry), if the session holds it. */
  toolCall(callId: string): ToolCallInfo | undefined {
    const call = this.#callIds.indexOf(callId);
    const i = call < 0 ? NONE : this.#callEntry[call]!;
    if (i === NONE) return undefined;
    const entry = this.entry(i);
    const content = entry.type === "message" && isObject(entry.message) ? entry.message.content : undefined;
    let found: ToolCallInfo | undefined;
    // The last block with the id, as a Map built over the blocks in order would keep it.
    if (Array.isArray(content)) {
      for (const block of content) {
        if (isObject(block) && block.type === "toolCall" && block.id === callId) {
          found = { id: callId, name: typeof block.name === "string" ? block.name : "tool", arguments: isObject(block.arguments) ? block.arguments : {}, entryId: entry.id };
        }
      }
    }
    return found;
  }

  /** The result answering the tool call with this id, if the session holds one. */
  toolResult(callId: string): MessageEntry | undefined {
    const call = this.#callIds.indexOf(callId);
    const i = call < 0 ? NONE : this.#resultEntry[call]!;
    return i === NONE ? undefined : (this.entry(i) as MessageEntry);
  }

  /** A parsed entry's bits; counts it into the figures. */
  #count(entry: SessionEntry, i: number): number {
    const stats = this.stats;
    let flags = (SETTINGS_TYPES.has(entry.type) ? EntryFlag.Settings : 0) | (UNLISTED_TYPES.has(entry.type) ? EntryFlag.Unlisted : 0) | (entry.type === "message" ? 0 : EntryFlag.NotMessage);
    switch (entry.type) {
      case "label":
        if (typeof entry.targetId === "string") {
          if (typeof entry.label === "string" && entry.label) this.labels.set(entry.targetId, entry.label);
          else this.labels.delete(entry.targetId);
        }
        return flags;
      case "session_info":
        this.#name = typeof entry.name === "string" && entry.name.trim() ? entry.name.trim() : undefined;
        return flags;
      case "compaction":
        stats.compactions++;
        return flags;
      case "branch_summary":
        stats.branchSummaries++;
        return flags;
      case "custom_message":
        stats.customMessages++;
        return entry.display === false ? flags | EntryFlag.Unlisted : flags;
      case "message":
        break;
      default:
        return flags;
    }
    const message = entry.message;
    if (!isObject(message)) return flags;
    if (message.role === "assistant") return flags | this.#countAssistant(assistantFacts(message), i);
    if (message.role === "toolResult") return flags | this.#countResult(typeof message.toolCallId === "string" ? message.toolCallId : undefined, i);
    return message.role === "user" ? this.#countUser(flags) : flags;
  }

  /** An unparsed message line's bits, from what the loader read of it. */
  #countLine(line: LineEntry, i: number): number {
    if (line.role === "assistant") return this.#countAssistant(line.assistant!, i);
    if (line.role === "toolResult") return this.#countResult(line.toolCallId, i);
    return line.role === "user" ? this.#countUser(0) : 0;
  }

  #countUser(flags: number): number {
    this.stats.userMessages++;
    return flags | EntryFlag.User;
  }

  #countAssistant(facts: AssistantFacts, i: number): number {
    const stats = this.stats;
    stats.assistantMessages++;
    if (facts.model !== undefined) this.#models.add(facts.model);
    // The core's addition, in file order: the insights' totals are these very numbers.
    if (facts.usage) addUsage(stats, facts.usage);
    for (const callId of facts.callIds) {
      stats.toolCalls++;
      if (callId === undefined) continue;
      this.#callEntry[this.#call(callId)] = i;
      const results = this.#unpaired.get(callId);
      if (results) {
        this.#unpaired.delete(callId);
        for (const result of results) this.#flags[result] = this.#flags[result]! | EntryFlag.Paired;
      }
    }
    return EntryFlag.Assistant | (facts.toolOnly ? EntryFlag.ToolOnly : 0);
  }

  /** The number of a tool call id, added when new. */
  #call(callId: string): number {
    const known = this.#callIds.indexOf(callId);
    if (known >= 0) return known;
    const call = this.#callIds.add(callId);
    if (call >= this.#callEntry.length) {
      const grow = (old: Int32Array) => {
        const next = new Int32Array(old.length * 2).fill(NONE);
        next.set(old);
        return next;
      };
      this.#callEntry = grow(this.#callEntry);
      this.#resultEntry = grow(this.#resultEntry);
    }
    this.#callEntry[call] = NONE;
    this.#resultEntry[call] = NONE;
    return call;
  }

  #countResult(callId: string | undefined, i: number): number {
    this.stats.toolResults++;
    if (callId === undefined) return EntryFlag.ToolResult;
    const call = this.#call(callId);
    this.#resultEntry[call] = i;
    if (this.#callEntry[call] !== NONE) return EntryFlag.ToolResult | EntryFlag.Paired;
    const waiting = this.#unpaired.get(callId) ?? [];
    waiting.push(i);
    this.#unpaired.set(callId, waiting);
    return EntryFlag.ToolResult;
  }

  /** Root → entry as entry numbers (no lookup by id per entry: a 100,000-entry path in a few ms). */
  pathIndexes(id: string | null): number[] {
    const path: number[] = [];
    let i = id === null ? undefined : this.indexOf(id);
    if (i === undefined) return path;
    for (let guard = 0; i >= 0 && guard <= this.size; guard++, i = this.#parent[i]!) path.push(i);
    return path.reverse();
  }

  /** Whether entry `ancestor` is on the path from the root to entry `i` (itself included). */
  isOnPathTo(ancestor: number, i: number): boolean {
    for (let guard = 0; i >= 0 && guard <= this.size; guard++, i = this.#parent[i]!) if (i === ancestor) return true;
    return false;
  }

  /** The newest leaf below `id` (the last child at each level), as pi's export opens a clicked entry. */
  newestLeafUnder(id: string): string {
    let i = this.indexOf(id);
    if (i === undefined) return id;
    for (let guard = 0; guard <= this.size; guard++) {
      const kids = this.childIndexes(i);
      if (kids.length === 0) break;
      i = kids[kids.length - 1]!;
    }
    return this.id(i);
  }

  /** Entries in the subtree under entry `i`, itself included. */
  subtreeSize(i: number): number {
    if (!this.#subtreeSizes) {
      const n = this.size;
      const sizes = new Int32Array(n).fill(1);
      // Pre-order, then children before parents: no recursion.
      const order = new Int32Array(n);
      let count = 0;
      const stack = [...this.#roots];
      while (stack.length > 0) {
        const e = stack.pop()!;
        order[count++] = e;
        const only = this.#onlyChild[e]!;
        if (only >= 0) stack.push(only);
        else if (only === MANY) stack.push(...this.#many.get(e)!);
      }
      for (let k = count - 1; k >= 0; k--) {
        const e = order[k]!;
        const p: number = this.#parent[e]!;
        if (p >= 0) sizes[p] = sizes[p]! + sizes[e]!;
      }
      this.#subtreeSizes = sizes;
    }
    return this.#subtreeSizes[i] ?? 1;
  }

  /** The last entry before `id` on its path that has more than one child: where its branch diverged. */
  divergencePoint(id: string): SessionEntry | undefined {
    const start = this.indexOf(id);
    if (start === undefined) return undefined;
    let i: number = start;
    for (let guard = 0; guard <= this.size; guard++) {
      const p: number = this.#parent[i]!;
      if (p < 0) return undefined;
      if (this.#onlyChild[p] === MANY) return this.entry(p);
      i = p;
    }
    return undefined;
  }

  sessionName(): string | undefined {
    return this.#name ?? (typeof this.header.title === "string" ? this.header.title : undefined);
  }
}
