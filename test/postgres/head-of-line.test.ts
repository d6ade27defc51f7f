/**
 * One session's large write does not hold up another session's flush: a 64 MiB `write` runs on a
 * connection of its own, one 256 KiB statement at a time, each after the small mutations queued
 * before it, while the other session's appends go on.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { SessionManager } from "../../src/index.js";
import { pseudoRandomBytes } from "../../src/testing/index.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dropSchema, freshSchema, openStorage } from "./helpers.js";

const schema = freshSchema("hol");
let port: PostgresStorage;

beforeAll(() => {
  port = openStorage(schema);
});

afterAll(async () => {
  await port.close();
  await dropSchema(schema);
});

/** One entry appended and flushed: its time in ms. */
async function flushOnce(sm: SessionManager, i: number): Promise<number> {
  const started = performance.now();
  sm.appendMessage(userMsg(`entry ${i}: ${"x".repeat(1000)}`));
  await sm.flush();
  return performance.now() - started;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/** Flushes of `sm` until `done` settles: their times. */
async function flushesUntil(sm: SessionManager, done: Promise<unknown>, from: number): Promise<number[]> {
  let running = true;
  void done.finally(() => (running = false));
  const times: number[] = [];
  for (let i = 0; running; i++) times.push(await flushOnce(sm, from + i));
  return times;
}

/**
 * One round: flushes of `sm` while a 64 MiB write to another session runs, then as many for as
 * long with nothing else running (the control: what the machine alone does to a flush's time).
 * The delay is the worst flush during the write over the worst of the control.
 */
async function round(sm: SessionManager, big: Uint8Array, n: number): Promise<{ delay: number; summary: string }> {
  const path = `sessions/--other--/big-${n}.jsonl`;
  const started = performance.now();
  const during = await flushesUntil(sm, port.write(path, big), 1000 * n);
  const writeMs = performance.now() - started;
  expect((await port.stat(path))?.size).toBe(big.length);
  const control = await flushesUntil(sm, new Promise((resolve) => setTimeout(resolve, writeMs)), 1000 * n + 500);
  expect(during.length).toBeGreaterThan(10);
  const [worst, controlWorst] = [Math.max(...during), Math.max(...control)];
  const summary =
    `write ${writeMs.toFixed(0)} ms: ${during.length} flushes, p50 ${percentile(during, 0.5).toFixed(1)} ms, max ${worst.toFixed(1)} ms; ` +
    `control ${control.length} flushes, p50 ${percentile(control, 0.5).toFixed(1)} ms, max ${controlWorst.toFixed(1)} ms`;
  return { delay: worst - controlWorst, summary };
}

it("a 64 MiB write to one session does not hold another session's flushes behind it (the delay is printed; its ≤ 20 ms target is timing, for the bench)", async () => {
  const sm = await SessionManager.create(port, "/head-of-line");
  sm.appendMessage(userMsg("start"));
  sm.appendMessage(assistantMsg("ok"));
  await sm.flush();

  // Correctness: many flushes complete while the write runs (behind it, the first flush waited
  // 2,444 ms for the whole write). The delay over a quiet period of the same length is printed:
  // other processes on a shared machine add tens of ms to a flush at random.
  const big = pseudoRandomBytes(64 << 20, 7);
  const { delay, summary } = await round(sm, big, 1);
  console.info(`head of line, 64 MiB write: ${summary}; delay ${delay.toFixed(1)} ms`);
  await sm.close();
});
