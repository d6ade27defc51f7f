/**
 * Where one session's tokens, money, context and tool time went.
 *
 * - **Totals** count every entry of the file, every branch, in file order: what was paid for,
 *   whichever branch it is on. They are the viewer header's figures (tokens, cost, tool calls),
 *   added up by the same function in the same order (usage.ts).
 * - **Turns** follow the path from the root to one leaf (the viewed one; the file's by default).
 *   A turn is a user message and everything after it up to the next user message on that path;
 *   what comes before the first user message (rarely anything with a cost) is turn 0, listed only
 *   when it holds an assistant message or a compaction. Branches left behind are in the totals, not
 *   in the turns.
 * - **Context** of a call is what the model was sent: input + cache read + cache write tokens of
 *   its assistant message. A turn's context is its last call's (the calls of a turn grow it); its
 *   peak is its largest. Compactions on the path are listed with the turn they happen in and the
 *   tokens they summarized away.
 * - **Tools**, over every entry (as the header counts tool calls): calls (toolCall blocks), results,
 *   errors (a toolResult with `isError`), output (UTF-8 bytes of a result's text; images are not
 *   text) and duration. pi stamps each entry as it is written, so a result's duration is its
 *   entry's timestamp minus its parent entry's: the calling assistant message for the first result
 *   of a batch, the previous result for the next ones. Run one after another (pi's sequential
 *   mode, and every pi before parallel tools), that is each tool's own run time; run in parallel
 *   (pi writes the batch's results together when the last one ends), the first result carries the
 *   batch's wall time and the others about 0. Either way a batch's durations add up to the time
 *   spent in its tools. A result whose time or parent's time cannot be read has no duration.
 */
import type { SessionEntry, SessionHeader } from "../format/types.js";
import { addUsage, contextTokens, emptyUsage, messageUsage, modelOf, type Usage } from "./usage.js";

export interface TurnInsight {
  /** 1 for the first user message on the path, 0 for what comes before it. */
  turn: number;
  /** The user message's entry; null for turn 0. */
  entryId: string | null;
  /** When the turn started: its first entry's timestamp (ISO 8601). */
  timestamp: string | undefined;
  /** From the turn's first entry to its last, in ms; null when a timestamp cannot be read. */
  durationMs: number | null;
  /** The user's text on one line, at most 200 characters. */
  prompt: string;
  assistantMessages: number;
  usage: Usage;
  /** Tokens the turn's last call was sent (null: no call in the turn reported any). */
  context: number | null;
  /** The most any call of the turn was sent. */
  peakContext: number | null;
  toolCalls: number;
  toolErrors: number;
  /** Compaction entries of the turn, each with the context size it summarized (`tokensBefore`). */
  compactions: Array<{ entryId: string; tokensBefore: number }>;
}

export interface ToolInsight {
  name: string;
  /** toolCall blocks naming the tool. */
  calls: number;
  /** Results written for them. */
  results: number;
  /** Results with `isError`. */
  errors: number;
  /** Results with a duration (see the module's note), and the sum and maximum of those. */
  timedResults: number;
  durationMs: number;
  maxDurationMs: number;
  /** UTF-8 bytes of the results' text. */
  outputBytes: number;
}

interface SessionTotals {
  usage: Usage;
  assistantMessages: number;
  toolCalls: number;
  toolResults: number;
  toolErrors: number;
  /** Models of the assistant messages, in order of first use (`provider/model`). */
  models: string[];
}

export interface SessionInsights {
  id: string;
  cwd: string;
  /** The leaf whose path the turns follow (null: the session has no entries). */
  leafId: string | null;
  /** Every entry of every branch: the viewer header's figures. */
  totals: SessionTotals;
  /** The turns' usage added up: the path to the leaf only. */
  pathUsage: Usage;
  turns: TurnInsight[];
  /** Most called first. */
  tools: ToolInsight[];
}

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;

const PROMPT_CHARS = 200;

/** Bytes of `text` in UTF-8, without encoding it. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The text of a message's content: a string, or its text blocks. */
function contentTexts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content) if (isObject(block) && block.type === "text" && typeof block.text === "string") texts.push(block.text);
  return texts;
}

function toolCallsOf(message: Block): Block[] {
  return Array.isArray(message.content) ? message.content.filter((block): block is Block => isObject(block) && block.type === "toolCall") : [];
}

const time = (entry: SessionEntry | undefined) => (entry && typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN);

function messageOf(entry: SessionEntry): Block | undefined {
  return entry.type === "message" && isObject(entry.message) ? (entry.message as Block) : undefined;
}

function emptyTool(name: string): ToolInsight {
  return { name, calls: 0, results: 0, errors: 0, timedResults: 0, durationMs: 0, maxDurationMs: 0, outputBytes: 0 };
}

function newTurn(turn: number, entry: SessionEntry | undefined, prompt: string): TurnInsight {
  return {
    turn,
    entryId: turn === 0 || !entry ? null : entry.id,
    timestamp: entry?.timestamp,
    durationMs: null,
    prompt,
    assistantMessages: 0,
    usage: emptyUsage(),
    context: null,
    peakContext: null,
    toolCalls: 0,
    toolErrors: 0,
    compactions: [],
  };
}

/**
 * Insights of a session from its header and entries (file order, canonical: as SessionManager's
 * getEntries() or the viewer's model holds them). An entry whose id came before is passed over, as
 * the viewer passes it over. `leafId`: the leaf whose path the turns follow; undefined takes the
 * file's last entry (seed 003's `leaf` entries move it, as on load).
 */
export function sessionInsights(header: SessionHeader, entries: readonly SessionEntry[], leafId?: string | null): SessionInsights {
  const byId = new Map<string, SessionEntry>();
  const unique: SessionEntry[] = [];
  let fileLeaf: string | null = null;
  for (const entry of entries) {
    if (byId.has(entry.id)) continue;
    byId.set(entry.id, entry);
    unique.push(entry);
    if (entry.type !== "leaf") fileLeaf = entry.id;
    else if (typeof entry.targetId === "string" && byId.has(entry.targetId)) fileLeaf = entry.targetId;
  }
  const leaf = leafId === undefined ? fileLeaf : leafId !== null && byId.has(leafId) ? leafId : null;

  const totals: SessionTotals = { usage: emptyUsage(), assistantMessages: 0, toolCalls: 0, toolResults: 0, toolErrors: 0, models: [] };
  const models = new Set<string>();
  const callNames = new Map<string, string>();
  const tools = new Map<string, ToolInsight>();
  const tool = (name: string) => tools.get(name) ?? tools.set(name, emptyTool(name)).get(name)!;
  for (const entry of unique) {
    const message = messageOf(entry);
    if (message?.role !== "assistant") continue;
    totals.assistantMessages++;
    const model = modelOf(message);
    if (model !== undefined) models.add(model);
    const usage = messageUsage(message);
    if (usage) addUsage(totals.usage, usage);
    for (const call of toolCallsOf(message)) {
      totals.toolCalls++;
      const name = typeof call.name === "string" ? call.name : "tool";
      tool(name).calls++;
      if (typeof call.id === "string") callNames.set(call.id, name);
    }
  }
  totals.models = [...models];
  for (const entry of unique) {
    const message = messageOf(entry);
    if (message?.role !== "toolResult") continue;
    totals.toolResults++;
    const called = typeof message.toolCallId === "string" ? callNames.get(message.toolCallId) : undefined;
    const stats = tool(called ?? (typeof message.toolName === "string" ? message.toolName : "tool"));
    stats.results++;
    if (message.isError === true) {
      stats.errors++;
      totals.toolErrors++;
    }
    for (const text of contentTexts(message.content)) stats.outputBytes += utf8Length(text);
    const parent = typeof entry.parentId === "string" ? byId.get(entry.parentId) : undefined;
    const duration = time(entry) - time(parent);
    if (duration >= 0) {
      stats.timedResults++;
      stats.durationMs += duration;
      stats.maxDurationMs = Math.max(stats.maxDurationMs, duration);
    }
  }

  const turns = pathTurns(pathTo(leaf, byId));
  const pathUsage = emptyUsage();
  for (const turn of turns) addUsage(pathUsage, turn.usage);
  return {
    id: header.id,
    cwd: typeof header.cwd === "string" ? header.cwd : "",
    leafId: leaf,
    totals,
    pathUsage,
    turns,
    tools: [...tools.values()].sort((a, b) => b.calls - a.calls || b.results - a.results || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

/** Root → leaf, following parents (a cycle in a damaged file ends the walk). */
function pathTo(leafId: string | null, byId: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let entry = leafId === null ? undefined : byId.get(leafId);
  while (entry && !seen.has(entry.id)) {
    seen.add(entry.id);
    path.push(entry);
    entry = typeof entry.parentId === "string" ? byId.get(entry.parentId) : undefined;
  }
  return path.reverse();
}

function pathTurns(path: readonly SessionEntry[]): TurnInsight[] {
  const turns: TurnInsight[] = [];
  let turn = newTurn(0, path[0], "");
  let first = path[0];
  let last = path[0];
  const close = () => {
    const duration = time(last) - time(first);
    turn.durationMs = Number.isNaN(duration) ? null : duration;
    if (turn.turn > 0 || turn.assistantMessages > 0 || turn.compactions.length > 0) turns.push(turn);
  };
  for (const entry of path) {
    const message = messageOf(entry);
    if (message?.role === "user") {
      close();
      turn = newTurn(turn.turn + 1, entry, contentTexts(message.content).join(" ").replace(/\s+/g, " ").trim().slice(0, PROMPT_CHARS));
      first = entry;
    }
    last = entry;
    if (entry.type === "compaction") {
      turn.compactions.push({ entryId: entry.id, tokensBefore: typeof entry.tokensBefore === "number" ? entry.tokensBefore : 0 });
      continue;
    }
    if (message?.role === "toolResult") {
      if (message.isError === true) turn.toolErrors++;
      continue;
    }
    if (message?.role !== "assistant") continue;
    turn.assistantMessages++;
    turn.toolCalls += toolCallsOf(message).length;
    const usage = messageUsage(message);
    if (!usage) continue;
    addUsage(turn.usage, usage);
    const context = contextTokens(usage);
    if (context > 0) {
      turn.context = context;
      turn.peakContext = Math.max(turn.peakContext ?? 0, context);
    }
  }
  if (path.length > 0) close();
  return turns;
}
