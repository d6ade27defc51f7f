/** The append workload: the same ~1–2 KB messages appended by ours and by pi. */
import { performance } from "node:perf_hooks";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { SessionManager, type AgentMessage, type StoragePort } from "../../src/index.js";
import { APPEND_SIZES, MessageFactory } from "../../test/shared/message-factory.js";

export const APPEND_CWD = "/bench/append-project";
const APPEND_SESSION_DIR = "sessions/--bench-append-project--";

type PiMessage = Parameters<PiSessionManager["appendMessage"]>[0];

let cached: { count: number; messages: Record<string, unknown>[] } | null = null;

/** `count` messages in conversation order (user first, then an assistant), generated once. */
export function appendWorkload(count: number): Record<string, unknown>[] {
  if (cached?.count !== count) cached = { count, messages: new MessageFactory(7, APPEND_SIZES).sequence(count) };
  return cached.messages;
}

/** Mean bytes of one serialized message entry of the workload. */
export function meanEntryBytes(count: number): number {
  const messages = appendWorkload(count);
  const sample = messages.slice(0, 2000);
  const wrapper = { type: "message", id: "0a1b2c3d", parentId: "4e5f6a7b", timestamp: new Date().toISOString() };
  const bytes = sample.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify({ ...wrapper, message }) + "\n"), 0);
  return bytes / sample.length;
}

/**
 * Ours: a new session, `count` appends, `await flush()` after every `flushEvery` appends (0:
 * once at the end). Timed from the first append until the last flush resolves.
 */
export async function appendMessages(storage: StoragePort, count: number, flushEvery: number): Promise<{ ms: number; file: string }> {
  const messages = appendWorkload(count);
  const sm = await SessionManager.create(storage, APPEND_CWD, { sessionDir: APPEND_SESSION_DIR });
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    sm.appendMessage(messages[i] as unknown as AgentMessage);
    if (flushEvery > 0 && (i + 1) % flushEvery === 0) await sm.flush();
  }
  await sm.flush();
  const ms = performance.now() - start;
  const file = sm.getSessionFile()!;
  await sm.close();
  return { ms, file };
}

/** pi: a new session in `sessionDir` (absolute), `count` appends (pi writes each with appendFileSync). */
export function piAppendMessages(sessionDir: string, count: number): { ms: number; file: string } {
  const messages = appendWorkload(count);
  const pi = PiSessionManager.create(APPEND_CWD, sessionDir);
  const start = performance.now();
  for (let i = 0; i < count; i++) pi.appendMessage(messages[i] as unknown as PiMessage);
  const ms = performance.now() - start;
  return { ms, file: pi.getSessionFile()! };
}
