/**
 * Head-of-line delay on the PostgreSQL port, measured by test/postgres/head-of-line.test.ts and by
 * the bench's postgres section: one session flushes in a loop while a large `write` to another
 * session runs, then as many times for as long with nothing else running (the control: what the
 * machine alone does to a flush's time). The delay is the worst flush during the write over the
 * control's worst; docs/postgres.md ("Large writes") bounds it at 20 ms, one 256 KiB statement.
 */
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import type { SessionManager } from "../../src/index.js";
import { userMsg } from "../shared/messages.js";

/** What a large write may add to another session's worst flush (docs/postgres.md). */
export const HEAD_OF_LINE_BOUND_MS = 20;

export interface HeadOfLineRound {
  /** How long the large write took, ms. */
  writeMs: number;
  /** The written file's size as stored once the write resolved; null when it is missing. */
  storedBytes: number | null;
  /** Each flush's time while the write ran, ms. */
  during: number[];
  /** Each flush's time in the control period, as long as the write, ms. */
  control: number[];
  /** The worst flush during the write over the control's worst, ms. */
  delay: number;
}

/** One entry appended and flushed: its time in ms. */
async function flushOnce(sm: SessionManager, i: number): Promise<number> {
  const started = performance.now();
  sm.appendMessage(userMsg(`entry ${i}: ${"x".repeat(1000)}`));
  await sm.flush();
  return performance.now() - started;
}

/** Flushes of `sm` until `done` settles: their times. */
async function flushesUntil(sm: SessionManager, done: Promise<unknown>, from: number): Promise<number[]> {
  let running = true;
  void done.finally(() => (running = false));
  const times: number[] = [];
  for (let i = 0; running; i++) times.push(await flushOnce(sm, from + i));
  return times;
}

/** Round `n`: flushes of `sm` (a session on `port`) beside a write of `big` to another session at `path`, then the control. */
export async function headOfLineRound(port: PostgresStorage, sm: SessionManager, big: Uint8Array, path: string, n: number): Promise<HeadOfLineRound> {
  const started = performance.now();
  const during = await flushesUntil(sm, port.write(path, big), 1000 * n);
  const writeMs = performance.now() - started;
  const storedBytes = (await port.stat(path))?.size ?? null;
  const control = await flushesUntil(sm, new Promise((resolve) => setTimeout(resolve, writeMs)), 1000 * n + 500);
  return { writeMs, storedBytes, during, control, delay: Math.max(...during) - Math.max(...control) };
}

export const percentile = (values: readonly number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/** The round in a line: flushes, medians and worst flushes during the write and in the control. */
export function describeRound({ writeMs, during, control }: HeadOfLineRound): string {
  return (
    `write ${writeMs.toFixed(0)} ms: ${during.length} flushes, p50 ${percentile(during, 0.5).toFixed(1)} ms, max ${Math.max(...during).toFixed(1)} ms; ` +
    `control ${control.length} flushes, p50 ${percentile(control, 0.5).toFixed(1)} ms, max ${Math.max(...control).toFixed(1)} ms`
  );
}
