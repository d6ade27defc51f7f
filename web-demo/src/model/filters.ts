/**
 * pi's tree filters and search: which entries the sidebar lists, and the text a search matches
 * (label + role + text + bash command + model, all words must match).
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { contentText } from "./content-text.js";
import { EntryFlag, type SessionModel } from "./session-model.js";

export const ENTRY_FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"] as const;
export type EntryFilter = (typeof ENTRY_FILTERS)[number];

export const FILTER_LABELS: Record<EntryFilter, { label: string; title: string }> = {
  default: { label: "Default", title: "Hide settings entries (labels, custom, model and thinking changes)" },
  "no-tools": { label: "No-tools", title: "Default minus tool results" },
  "user-only": { label: "User", title: "Only user messages" },
  "labeled-only": { label: "Labeled", title: "Only labeled entries" },
  all: { label: "All", title: "Show everything" },
};

export const isEntryFilter = (value: unknown): value is EntryFilter => ENTRY_FILTERS.includes(value as EntryFilter);

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;
const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** Whether the tree lists entry number `i` under `filter` (pi's filterNodes, the leaf aside). */
export function entryMatches(model: SessionModel, i: number, filter: EntryFilter): boolean {
  const flags = model.flags(i);
  if (flags & EntryFlag.ToolOnly) return false;
  switch (filter) {
    case "user-only":
      return (flags & EntryFlag.User) !== 0;
    case "no-tools":
      return (flags & (EntryFlag.Settings | EntryFlag.ToolResult)) === 0;
    case "labeled-only":
      return model.labels.has(model.id(i));
    case "all":
      return true;
    default:
      return (flags & EntryFlag.Settings) === 0;
  }
}

/** What a search in the session looks at, lowercased (pi's getSearchableText). */
function searchableText(entry: SessionEntry, label: string | undefined): string {
  const parts: string[] = [];
  if (label) parts.push(label);
  switch (entry.type) {
    case "message": {
      const message: Block = isObject(entry.message) ? entry.message : {};
      parts.push(str(message.role), contentText(message.content));
      if (message.role === "bashExecution") parts.push(str(message.command));
      break;
    }
    case "custom_message":
      parts.push(str(entry.customType), contentText(entry.content));
      break;
    case "compaction":
      parts.push("compaction", str(entry.summary));
      break;
    case "branch_summary":
      parts.push("branch summary", str(entry.summary));
      break;
    case "model_change":
      parts.push("model", str(entry.modelId), str(entry.model));
      break;
    case "thinking_level_change":
      parts.push("thinking", str(entry.thinkingLevel));
      break;
  }
  return parts.join(" ").toLowerCase();
}

function searchTokens(query: string): string[] {
  return query.toLowerCase().split(/\s+/).filter(Boolean);
}

/** Characters JSON may write escaped: a word holding one may not be in a line's text as written. */
const ESCAPABLE = /["\\/\u0000-\u001f]/;
/** Two text blocks: their texts are joined with nothing between them, which a line's text does not show. */
const TEXT_BLOCK = '"type":"text"';

/**
 * Whether an unparsed line can be left out without parsing it: its text as written (escapes and
 * all) lacks a word. Only for words and lines where that text holds every searched character as
 * the parsed entry's text does: no word with a character JSON may escape (any other character is
 * written as itself, unless as a \u escape: no line with one), at most one text block, no label
 * (a label's text is not in the line).
 */
function cannotMatch(model: SessionModel, i: number, tokens: readonly string[]): boolean {
  if (model.labels.has(model.id(i))) return false;
  const line = model.lineText(i);
  if (line === null || line.includes("\\u") || line.indexOf(TEXT_BLOCK) !== line.lastIndexOf(TEXT_BLOCK)) return false;
  const text = line.toLowerCase();
  return !tokens.every((t) => text.includes(t));
}

/** Yields to the event loop: rendering and input get their turn between slices of work. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/**
 * The numbers of entries matching every word of `query`, computed in slices of at most ~12 ms so a
 * search over every entry never blocks the page. An entry not parsed yet is first looked at as
 * written (cannotMatch), and parsed for the search only when that text has every word (not kept).
 * `isCurrent` stops a search overtaken by newer input (it resolves null then).
 */
export async function searchEntries(model: SessionModel, query: string, isCurrent: () => boolean = () => true): Promise<Set<number> | null> {
  const tokens = searchTokens(query);
  const plain = tokens.every((t) => !ESCAPABLE.test(t));
  const hits = new Set<number>();
  let sliceStart = performance.now();
  for (let i = 0; i < model.size; i++) {
    if (plain && cannotMatch(model, i, tokens)) continue;
    const text = searchableText(model.peek(i), model.labels.get(model.id(i)));
    if (tokens.every((t) => text.includes(t))) hits.add(i);
    if ((i & 7) === 7 && performance.now() - sliceStart > 12) {
      await yieldToEventLoop();
      if (!isCurrent()) return null;
      sliceStart = performance.now();
    }
  }
  return isCurrent() ? hits : null;
}
