/**
 * One session, indexed for viewing: entries by id, children (oldest first, as pi sorts them),
 * labels, tool calls paired with their results, subtree sizes and the header figures. Built in
 * O(entries); `append` extends it for a session that grows while it is watched.
 *
 * Entries are numbered in file order and the tree is kept in typed arrays (parent, only child,
 * flags), with arrays only for the few entries that branch: a 100,000-entry session is laid out
 * again (filter, search, fold) in tens of milliseconds, without building 100,000 small objects.
 */
import type { MessageEntry, SessionEntry, SessionHeader } from "../../../src/format/types.js";
import { addUsage, messageUsage, modelOf, type CostCounts, type TokenCounts } from "../../../src/insights/usage.js";
import { contentText } from "./content-text.js";

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

/** Per-entry bits, for filters that run over every entry. */
export const EntryFlag = {
  /** label, custom, model_change, thinking_level_change: hidden by the default filter. */
  Settings: 1,
  ToolResult: 2,
  User: 4,
  /** An assistant message with tool calls and no text that did not fail: the tree hides it. */
  ToolOnly: 8,
} as const;

const SETTINGS_TYPES = new Set(["label", "custom", "model_change", "thinking_level_change", "leaf"]);
const NONE = -1;
const MANY = -2;

export class SessionModel {
  readonly header: SessionHeader;
  readonly entries: SessionEntry[] = [];
  readonly #index = new Map<string, number>();
  #parent = new Int32Array(1024);
  /** The only child, NONE, or MANY (then in #many). */
  #onlyChild = new Int32Array(1024);
  #flags = new Uint8Array(1024);
  readonly #many = new Map<number, number[]>();
  readonly #roots: number[] = [];
  /** Entries whose parent has not been seen yet (out of file order), by the parent's id. */
  readonly #waitingFor = new Map<string, number[]>();
  readonly labels = new Map<string, string>();
  readonly toolCalls = new Map<string, ToolCallInfo>();
  readonly toolResults = new Map<string, MessageEntry>();
  readonly stats: SessionStats = emptyStats();
  #models = new Set<string>();
  #subtreeSizes: Int32Array | null = null;
  #name: string | undefined;
  #leafId: string | null = null;

  constructor(header: SessionHeader, entries: readonly SessionEntry[] = []) {
    this.header = header;
    this.append(entries);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The leaf the file leaves: its last entry, or where seed 003's last `leaf` entry points. */
  get fileLeafId(): string | null {
    return this.#leafId;
  }

  /** Adds entries written after the ones already held (a followed session). Returns the new ones. */
  append(entries: readonly SessionEntry[]): SessionEntry[] {
    const added: SessionEntry[] = [];
    this.#reserve(this.entries.length + entries.length);
    const sortLater = new Set<number>();
    for (const entry of entries) {
      if (this.#index.has(entry.id)) continue;
      const i = this.entries.length;
      added.push(entry);
      this.entries.push(entry);
      this.#index.set(entry.id, i);
      this.#onlyChild[i] = NONE;
      this.#flags[i] = this.#count(entry);
      // seed 003's durable navigation: a leaf entry moves the leaf to its target (when known).
      if (entry.type === "leaf") {
        if (typeof entry.targetId === "string" && this.#index.has(entry.targetId)) this.#leafId = entry.targetId;
      } else this.#leafId = entry.id;
      const parentId = entry.parentId;
      const parent = parentId === null || parentId === undefined || parentId === entry.id ? undefined : this.#index.get(parentId);
      if (parent !== undefined) this.#attach(i, parent, sortLater);
      else {
        this.#parent[i] = NONE;
        this.#roots.push(i);
        if (parentId !== null && parentId !== undefined && parentId !== entry.id) {
          const waiting = this.#waitingFor.get(parentId) ?? [];
          waiting.push(i);
          this.#waitingFor.set(parentId, waiting);
        }
      }
      // Children that came before their parent (rare, out-of-order files) are re-homed now,
      // as the core's buildTree looks parents up among all entries.
      const orphans = this.#waitingFor.get(entry.id);
      if (orphans) {
        this.#waitingFor.delete(entry.id);
        for (const orphan of orphans) {
          this.#roots.splice(this.#roots.indexOf(orphan), 1);
          this.#attach(orphan, i, sortLater);
        }
      }
    }
    for (const parent of sortLater) this.#many.get(parent)!.sort((a, b) => this.#time(a) - this.#time(b));
    if (added.length > 0) this.#subtreeSizes = null;
    this.stats.models = [...this.#models];
    return added;
  }

  #time(i: number): number {
    return Date.parse(this.entries[i]!.timestamp);
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
    this.#parent = grow(this.#parent, (n) => new Int32Array(n));
    this.#onlyChild = grow(this.#onlyChild, (n) => new Int32Array(n));
    this.#flags = grow(this.#flags, (n) => new Uint8Array(n));
  }

  // --- by number (file order) --------------------------------------------------------------

  indexOf(id: string): number | undefined {
    return this.#index.get(id);
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

  // --- by id ---------------------------------------------------------------------------------

  getEntry(id: string): SessionEntry | undefined {
    const i = this.#index.get(id);
    return i === undefined ? undefined : this.entries[i];
  }

  parentOf(entry: SessionEntry): SessionEntry | undefined {
    const i = this.#index.get(entry.id);
    const p = i === undefined ? NONE : this.#parent[i]!;
    return p < 0 ? undefined : this.entries[p];
  }

  childrenOf(id: string): SessionEntry[] {
    const i = this.#index.get(id);
    return i === undefined ? [] : this.childIndexes(i).map((c) => this.entries[c]!);
  }

  #count(entry: SessionEntry): number {
    const stats = this.stats;
    if (typeof entry.timestamp === "string") {
      stats.firstTimestamp ??= entry.timestamp;
      stats.lastTimestamp = entry.timestamp;
    }
    let flags = SETTINGS_TYPES.has(entry.type) ? EntryFlag.Settings : 0;
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
        return flags;
      case "message":
        break;
      default:
        return flags;
    }
    const message = entry.message;
    if (!isObject(message)) return flags;
    if (message.role === "user") {
      stats.userMessages++;
      flags |= EntryFlag.User;
    } else if (message.role === "toolResult") {
      stats.toolResults++;
      flags |= EntryFlag.ToolResult;
      if (typeof message.toolCallId === "string") this.toolResults.set(message.toolCallId, entry);
    } else if (message.role === "assistant") {
      stats.assistantMessages++;
      const stopReason = message.stopReason;
      const failed = typeof stopReason === "string" && stopReason !== "stop" && stopReason !== "toolUse";
      if (!failed && contentText(message.content).trim() === "") flags |= EntryFlag.ToolOnly;
      const model = modelOf(message);
      if (model !== undefined) this.#models.add(model);
      // The core's addition, in file order: the insights' totals are these very numbers.
      const usage = messageUsage(message);
      if (usage) addUsage(stats, usage);
      if (Array.isArray(message.content)) {
        for (const block of message.content) {
          if (isObject(block) && block.type === "toolCall") {
            stats.toolCalls++;
            if (typeof block.id === "string") {
              const args = isObject(block.arguments) ? block.arguments : {};
              this.toolCalls.set(block.id, { id: block.id, name: typeof block.name === "string" ? block.name : "tool", arguments: args, entryId: entry.id });
            }
          }
        }
      }
    }
    return flags;
  }

  /** Root → entry, following parents. */
  pathTo(id: string | null): SessionEntry[] {
    return this.pathIndexes(id).map((i) => this.entries[i]!);
  }

  /** Root → entry as entry numbers (no lookup by id per entry: a 100,000-entry path in a few ms). */
  pathIndexes(id: string | null): number[] {
    const path: number[] = [];
    let i = id === null ? undefined : this.#index.get(id);
    if (i === undefined) return path;
    for (let guard = 0; i >= 0 && guard <= this.entries.length; guard++, i = this.#parent[i]!) path.push(i);
    return path.reverse();
  }

  /** The newest leaf below `id` (the last child at each level), as pi's export opens a clicked entry. */
  newestLeafUnder(id: string): string {
    let i = this.#index.get(id);
    if (i === undefined) return id;
    for (let guard = 0; guard <= this.entries.length; guard++) {
      const kids = this.childIndexes(i);
      if (kids.length === 0) break;
      i = kids[kids.length - 1]!;
    }
    return this.entries[i]!.id;
  }

  /** Entries in the subtree under entry `i`, itself included. */
  subtreeSize(i: number): number {
    if (!this.#subtreeSizes) {
      const n = this.entries.length;
      const sizes = new Int32Array(n).fill(1);
      // Pre-order, then children before parents: no recursion.
      const order: number[] = [];
      const stack = [...this.#roots];
      while (stack.length > 0) {
        const e = stack.pop()!;
        order.push(e);
        const only = this.#onlyChild[e]!;
        if (only >= 0) stack.push(only);
        else if (only === MANY) stack.push(...this.#many.get(e)!);
      }
      for (let k = order.length - 1; k >= 0; k--) {
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
    const start = this.#index.get(id);
    if (start === undefined) return undefined;
    let i: number = start;
    for (let guard = 0; guard <= this.entries.length; guard++) {
      const p: number = this.#parent[i]!;
      if (p < 0) return undefined;
      if (this.#onlyChild[p] === MANY) return this.entries[p];
      i = p;
    }
    return undefined;
  }

  sessionName(): string | undefined {
    return this.#name ?? (typeof this.header.title === "string" ? this.header.title : undefined);
  }
}
