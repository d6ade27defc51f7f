/**
 * The browser bench's workloads, run unchanged in the page (IndexedDB, OPFS, the naive peer) and
 * in Node (node-fs): only core modules and universal web APIs here.
 */
import { createEntryId } from "../../src/format/ids.js";
import type { AgentMessage } from "../../src/format/types.js";
import type { StoragePort } from "../../src/port.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { timedPort, type Breakdown } from "./timed-port.js";

const APPEND_CWD = "/bench/browser-appends";
const OPEN_CWD = "/bench/browser-open";
export const OPEN_SESSION_PATH = "sessions/--bench-browser-open--/2026-01-01T00-00-00-000Z_0b5e55e5-0000-4000-8000-000000000050.jsonl";

/** mulberry32: the same seed gives the same numbers in Node and in Chromium. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the session file append entry branch context model tool result read write const function return " +
  "await async import export class interface type string number boolean null undefined if else for " +
  "while switch case break error message assistant user thinking storage browser worker index"
).split(" ");

/** Text of about `chars` characters, with the newlines, quotes and backslashes JSON has to escape. */
function text(random: () => number, chars: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const r = random();
    const word = r < 0.04 ? "\n" : r < 0.06 ? '"quoted"' : r < 0.07 ? "C:\\path\\to" : WORDS[Math.floor(random() * WORDS.length)]!;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(" ");
}

const between = (random: () => number, [min, max]: [number, number]) => Math.floor(min + random() * (max - min));

interface Sizes {
  user: [number, number];
  thinking: [number, number];
  text: [number, number];
  toolOutput: [number, number];
}

/** ~1–2 KB per serialized entry: the append workload. */
const APPEND_SIZES: Sizes = { user: [700, 1500], thinking: [300, 700], text: [100, 400], toolOutput: [800, 1700] };
/** A coding session's mix, dominated by tool output (file reads, command output). */
const SESSION_SIZES: Sizes = { user: [20, 1500], thinking: [200, 2500], text: [40, 1200], toolOutput: [400, 60_000] };

const usage = { input: 1200, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 1500, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * Messages of a coding conversation, in turns: user → assistant (thinking + tool call) →
 * tool result → assistant (text). `timestamp` is fixed by the index so the bytes are reproducible.
 */
function conversation(seed: number, count: number, sizes: Sizes, first = 0): AgentMessage[] {
  const random = prng(seed);
  const messages: AgentMessage[] = [];
  for (let i = first; i < first + count; i++) {
    const timestamp = 1_767_225_600_000 + i * 1000;
    const callId = `call_${Math.floor(i / 4)}`;
    switch (i % 4) {
      case 0:
        messages.push({ role: "user", content: text(random, between(random, sizes.user)), timestamp });
        break;
      case 1:
        messages.push({
          role: "assistant",
          content: [
            { type: "thinking", thinking: text(random, between(random, sizes.thinking)) },
            { type: "toolCall", id: callId, name: "read", arguments: { path: `src/file-${i}.ts` } },
          ],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage,
          stopReason: "toolUse",
          timestamp,
        });
        break;
      case 2:
        messages.push({
          role: "toolResult",
          toolCallId: callId,
          toolName: "read",
          content: [{ type: "text", text: text(random, between(random, sizes.toolOutput)) }],
          isError: false,
          timestamp,
        });
        break;
      default:
        messages.push({
          role: "assistant",
          content: [{ type: "text", text: text(random, between(random, sizes.text)) }],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage,
          stopReason: "stop",
          timestamp,
        });
    }
  }
  return messages;
}

/**
 * What the floors write per flush: `flushes` pieces of `bytes` each, cut from the append
 * workload's messages serialized as JSON lines, each piece on a buffer of its own (as the ports
 * store theirs). Text, not one repeated byte: Chromium compresses IndexedDB values, so a floor
 * of a repeated byte would cost the platform less than the session's text does.
 */
export function floorPieces(flushes: number, bytes: number): Uint8Array[] {
  const lines = conversation(7, Math.max(1, Math.ceil((flushes * bytes) / 1000)), APPEND_SIZES).map((message) => JSON.stringify(message));
  const text = new TextEncoder().encode(lines.join("\n") + "\n");
  return Array.from({ length: flushes }, (_, i) => {
    const start = (i * bytes) % Math.max(1, text.length - bytes);
    return text.slice(start, start + bytes);
  });
}

/** The messages the append workload appends, in order: the same in every run and on every platform. */
function appendMessages(count: number): AgentMessage[] {
  return conversation(7, count, APPEND_SIZES);
}

/**
 * What any JSONL writer of the append workload must do per flush, and nothing more: its entries
 * made (id, parent, time) and serialized as lines. The messages are made at once; the lines of
 * each flush as it is taken. The floors encode and write them (no SessionManager, no port).
 */
export function serializedFlushes(count: number, flushEvery: number): Iterable<string> {
  const messages = appendMessages(count);
  // The time formatted once per millisecond, as SessionManager does (nowIso): the least work.
  let isoMs = Number.NaN;
  let iso = "";
  const now = () => {
    const ms = Date.now();
    if (ms !== isoMs) [isoMs, iso] = [ms, new Date(ms).toISOString()];
    return iso;
  };
  return (function* () {
    const ids = new Set<string>();
    let parentId: string | null = null;
    for (let first = 0; first < count; first += flushEvery) {
      let lines = "";
      for (let i = first; i < Math.min(count, first + flushEvery); i++) {
        const id = createEntryId(ids);
        ids.add(id);
        lines += `${JSON.stringify({ type: "message", id, parentId, timestamp: now(), message: messages[i] })}\n`;
        parentId = id;
      }
      yield lines;
    }
  })();
}

/** Called when a workload's timed window opens and closes (to instrument exactly that window). */
export interface TimerHooks {
  onStart?(): void;
  onStop?(): void;
}

export interface AppendRun {
  ms: number;
  /** Lines in the file afterwards (header + entries), read back after the timing. */
  lines: number;
  bytes: number;
}

/**
 * A new session, `count` appends with `await flush()` after every `flushEvery`, timed from the
 * first append until the last flush resolves. Each run writes a session of its own.
 */
export async function timeAppends(storage: StoragePort, count: number, flushEvery: number, hooks: TimerHooks = {}): Promise<AppendRun> {
  const messages = appendMessages(count);
  const sm = await SessionManager.create(storage, APPEND_CWD);
  hooks.onStart?.();
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    sm.appendMessage(messages[i]!);
    if ((i + 1) % flushEvery === 0) await sm.flush();
  }
  await sm.flush();
  const ms = performance.now() - start;
  hooks.onStop?.();
  const path = sm.getSessionFile()!;
  await sm.close();
  const bytes = (await storage.read(path)) ?? new Uint8Array();
  return { ms, lines: bytes.reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 0), bytes: bytes.length };
}

export interface PairedRun extends AppendRun {
  /** The floor's steps, summed. */
  floorMs: number;
}

/**
 * The append workload with its floor taken flush by flush in the same run: after each of ours
 * resolves, `floorStep(n)` does the floor's work for flush n. Each side's time is the sum of its
 * own steps, so both meet the same moments of a machine whose other jobs come and go (a floor
 * measured in a run of its own, seconds apart, met other ones). Ours is timed from its first
 * append, as in timeAppends.
 */
export async function timePairedAppends(storage: StoragePort, count: number, flushEvery: number, floorStep: (flush: number) => Promise<void>): Promise<PairedRun> {
  const messages = appendMessages(count);
  const sm = await SessionManager.create(storage, APPEND_CWD);
  let ms = 0;
  let floorMs = 0;
  let flush = 0;
  let start = performance.now();
  for (let i = 0; i < count; i++) {
    sm.appendMessage(messages[i]!);
    if ((i + 1) % flushEvery !== 0 && i !== count - 1) continue;
    await sm.flush();
    const oursDone = performance.now();
    ms += oursDone - start;
    await floorStep(flush++);
    start = performance.now();
    floorMs += start - oursDone;
  }
  const path = sm.getSessionFile()!;
  await sm.close();
  const bytes = (await storage.read(path)) ?? new Uint8Array();
  return { ms, floorMs, lines: bytes.reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 0), bytes: bytes.length };
}

/** The append workload's flushes as the floors write them: each flush's lines (serializedFlushes) encoded, each on a buffer of its own. */
export function encodedFlushes(count: number, flushEvery: number): Uint8Array[] {
  const encoder = new TextEncoder();
  return Array.from(serializedFlushes(count, flushEvery), (lines) => encoder.encode(lines));
}

/**
 * A ~`targetBytes` v3 session file as bytes: header, a model and thinking-level change, then
 * conversation turns chained into one branch. The same bytes on every platform.
 */
export function largeSessionBytes(targetBytes: number): Uint8Array {
  const header = { type: "session", version: 3, id: "0b5e55e5-0000-4000-8000-000000000050", timestamp: "2026-01-01T00:00:00.000Z", cwd: OPEN_CWD };
  const lines = [JSON.stringify(header)];
  let size = lines[0]!.length + 1;
  let parentId: string | null = null;
  let n = 0;
  const push = (fields: Record<string, unknown>) => {
    const id = (0x10000000 + n).toString(16);
    const timestamp = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
    const line = JSON.stringify({ ...fields, id, parentId, timestamp });
    lines.push(line);
    size += line.length + 1;
    parentId = id;
    n++;
  };
  push({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" });
  push({ type: "thinking_level_change", thinkingLevel: "high" });
  // Generated in batches: the count that reaches the target is not known up front.
  const batch = 400;
  for (let seed = 1; size < targetBytes; seed++) {
    for (const message of conversation(seed, batch, SESSION_SIZES, (seed - 1) * batch)) {
      push({ type: "message", message });
      if (size >= targetBytes) break;
    }
  }
  return new TextEncoder().encode(`${lines.join("\n")}\n`);
}

export interface OpenRun {
  ms: number;
  entries: number;
  contextMessages: number;
}

/** SessionManager.open + buildSessionContext of an existing session, timed together. */
export async function timeOpen(storage: StoragePort, path: string, hooks: TimerHooks = {}): Promise<OpenRun> {
  hooks.onStart?.();
  const start = performance.now();
  const sm = await SessionManager.open(storage, path);
  const context = sm.buildSessionContext();
  const ms = performance.now() - start;
  hooks.onStop?.();
  const entries = sm.getEntries().length;
  await sm.close();
  return { ms, entries, contextMessages: context.messages.length };
}

/** Hex sha-256 of bytes, to prove the page and Node opened the same session. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A workload run on a timedPort: the storage calls of exactly its timed window. */
export async function instrumented<R>(
  storage: StoragePort,
  workload: (port: StoragePort, hooks: TimerHooks) => Promise<R>,
): Promise<R & { breakdown: Breakdown }> {
  const timed = timedPort(storage);
  const run = await workload(timed.port, { onStart: () => (timed.recording = true), onStop: () => (timed.recording = false) });
  return { ...run, breakdown: timed.totals };
}
