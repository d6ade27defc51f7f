/**
 * Liveness under network faults, through a TCP proxy the test breaks (fault-proxy.ts): every wait
 * for the server ends in a typed error within its deadline, a writer's lock moves away from a
 * holder that is suspended (SIGSTOP) or half-connected within its lease and that holder's next
 * append is refused, a port cut off on its client side reopens its own session at once, and a
 * pool too small for the port is refused. Each test prints what it measured.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { postgresStorage, type PostgresStorage, type PostgresStorageOptions } from "../../adapters/postgres/index.js";
import { SessionManager, isStorageError, type StorageError } from "../../src/index.js";
import { bundleCli, runCli } from "../shared/cli-runner.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";
import { dropSchema, freshSchema, openStorage, pgUrl, sql, waitFor } from "./helpers.js";
import { startWriter } from "./many-writers.js";

/** The defaults these tests hold the port to (docs/postgres.md). */
const CONNECT_MS = 5000;
const STATEMENT_MS = 10_000;
const LEASE_MS = 15_000;
/** What a bound allows beyond its deadline: scheduling on a loaded 2-core CI machine (each figure is printed). */
const SLACK_MS = 3000;

const schema = freshSchema("faults");
let direct: PostgresStorage;

beforeAll(() => {
  direct = openStorage(schema);
});

afterAll(async () => {
  await direct.close();
  await dropSchema(schema);
});

/** Runs `cleanup` when the test ends (the tests run concurrently: each keeps its own). */
function atEnd(context: TestContext, cleanup: () => Promise<unknown>): void {
  context.onTestFinished(() => cleanup().then(() => {}, () => {}));
}

async function proxy(context: TestContext): Promise<FaultProxy> {
  const started = await startFaultProxy(pgUrl());
  atEnd(context, () => started.close());
  return started;
}

function portThrough(context: TestContext, target: FaultProxy, options: Partial<PostgresStorageOptions> = {}): PostgresStorage {
  const port = postgresStorage({ connection: target.url, schema, ...options });
  atEnd(context, () => port.close());
  return port;
}

/** How long `promise` took to reject, and with what (it must reject). */
async function timeToError(promise: Promise<unknown>): Promise<{ ms: number; error: Error }> {
  const started = performance.now();
  const error = await promise.then(
    () => {
      throw new Error("resolved; a rejection was expected");
    },
    (reason: unknown) => reason as Error,
  );
  return { ms: performance.now() - started, error };
}

/** The StorageError under a SessionError (flush wraps the port's failure). */
function storageCause(error: Error): StorageError {
  const cause = isStorageError(error) ? error : (error as { cause?: unknown }).cause;
  expect(isStorageError(cause), String(error)).toBe(true);
  return cause as StorageError;
}

/** Takes the lock on `path` through `port`, retrying while it is held elsewhere; the time it took. */
async function takeOver(port: PostgresStorage, path: string, since: number, limitMs: number) {
  for (;;) {
    const lock = await port.acquireLock(path).catch((error: unknown) => {
      if (!isStorageError(error, "locked")) throw error;
      return undefined;
    });
    if (lock) return { lock, ms: performance.now() - since };
    if (performance.now() - since > limitMs) throw new Error(`the lock on ${path} did not move within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A session file with a user and an assistant message (pi writes none before the first answer). */
async function seedSession(port: PostgresStorage, dir: string): Promise<string> {
  const sm = await SessionManager.create(port, dir);
  sm.appendMessage(userMsg("seed"));
  sm.appendMessage(assistantMsg("answer"));
  await sm.flush();
  await sm.close();
  return sm.getSessionFile()!;
}

async function texts(path: string): Promise<string[]> {
  const sm = await SessionManager.open(direct, path, { readOnly: true });
  const all = sm.getEntries().map((entry) => (entry as { message?: { content?: unknown } }).message?.content);
  await sm.close();
  return all.filter((content): content is string => typeof content === "string");
}

// Each test mostly waits for a deadline or a lease: they run at once.
describe.concurrent("deadlines", () => {
  it("a proxy that stops forwarding: flush, stat and list each fail with io naming the operation and the wait", async (context) => {
    const cut = await proxy(context);
    const port = portThrough(context, cut);
    const sm = await SessionManager.open(port, await seedSession(direct, "/stall"));
    // Two reading connections open (and idle in the pool) when the stall begins.
    await Promise.all([port.stat("sessions"), port.list("")]);

    cut.setMode("stall");
    sm.appendMessage(userMsg("during the stall"));
    const [flush, stat, list] = await Promise.all([timeToError(sm.flush()), timeToError(port.stat("sessions/x")), timeToError(port.list("sessions"))]);
    console.info(
      `stall: flush failed after ${flush.ms.toFixed(0)} ms, stat after ${stat.ms.toFixed(0)} ms, list after ${list.ms.toFixed(0)} ms (statementTimeoutMs ${STATEMENT_MS})`,
    );
    for (const [action, outcome] of [
      ["append", flush],
      ["stat", stat],
      ["list", list],
    ] as const) {
      const error = storageCause(outcome.error);
      expect(error.code, action).toBe("io");
      expect(error.message, action).toMatch(new RegExp(`^postgres ${action} "[^"]+": no answer from the server for ${STATEMENT_MS} ms \\(statementTimeoutMs\\)`));
      expect(outcome.ms, action).toBeGreaterThanOrEqual(STATEMENT_MS - 50);
      expect(outcome.ms, action).toBeLessThan(STATEMENT_MS + SLACK_MS);
    }
    await sm.close().catch(() => {});
  });

  it("`sessionkit --store postgres://… ls` against a server that accepts TCP and never answers: one line, exit 4, within the connect deadline", async (context) => {
    const silent = await proxy(context);
    silent.setMode("stall"); // accepts, never forwards
    const tmp = await mkdtemp(join(tmpdir(), "sessionkit-pg-faults-"));
    atEnd(context, () => rm(tmp, { recursive: true, force: true }));
    const bundle = await bundleCli(tmp);
    const started = performance.now();
    const result = await runCli(bundle, ["--store", silent.url, "ls", "--all"], { cwd: tmp });
    const ms = performance.now() - started;
    console.info(`ls against a silent server: exit ${result.code} after ${ms.toFixed(0)} ms (connectTimeoutMs ${CONNECT_MS}, the process's start included)`);
    expect(silent.accepted).toBeGreaterThan(0);
    expect(result.code).toBe(4);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^sessionkit: ls: .*no connection to the server within ${CONNECT_MS} ms \\(connectTimeoutMs\\)`));
    expect(ms).toBeLessThan(CONNECT_MS + 4000);
  });

  it("a watch whose connection stalls reconnects once the path is back and tells its watcher its directory changed", async (context) => {
    const cut = await proxy(context);
    const port = portThrough(context, cut);
    const seen: string[] = [];
    await port.watch("watched", (path) => seen.push(path));
    cut.setMode("stall");
    const stalled = performance.now();
    cut.setMode("pass"); // the open connection stays stalled; a new one gets through
    await waitFor("the overflow report", () => (seen.includes("watched") ? true : undefined), STATEMENT_MS * 2 + SLACK_MS);
    const reportedMs = performance.now() - stalled;
    await direct.append("watched/after", new Uint8Array([1]));
    await waitFor("a change after reconnecting", () => (seen.includes("watched/after") ? true : undefined));
    console.info(`a stalled watch reconnected and reported its directory ${reportedMs.toFixed(0)} ms after the stall (pinged every ${STATEMENT_MS / 2} ms)`);
    expect(reportedMs).toBeLessThanOrEqual(STATEMENT_MS * 1.5 + SLACK_MS);
  });
});

describe.concurrent("a writer's lock is a lease", () => {
  it("moves from a SIGSTOPped writer within the lease; the writer's next append, once it runs again, is refused", async (context) => {
    const path = await seedSession(direct, "/stopped");
    const holder = startWriter(pgUrl(), schema, ["hold", path]);
    atEnd(context, async () => holder.child.kill("SIGKILL"));
    await holder.line((line) => line === "holding");

    holder.child.kill("SIGSTOP");
    const stopped = performance.now();
    const { lock, ms } = await takeOver(direct, path, stopped, LEASE_MS + 5000);
    console.info(`lock moved from a SIGSTOPped writer after ${ms.toFixed(0)} ms (leaseMs ${LEASE_MS})`);
    expect(ms).toBeLessThanOrEqual(LEASE_MS + SLACK_MS);
    await lock.release();

    const successor = await SessionManager.open(direct, path);
    successor.appendMessage(userMsg("from the new holder"));
    await successor.flush();

    holder.child.kill("SIGCONT");
    holder.child.stdin!.write("append from the old holder\n");
    const reply = await holder.line((line) => line.startsWith("appended") || line.startsWith("refused"));
    expect(reply).toMatch(/^refused persist-failed: /);
    successor.appendMessage(userMsg("the new holder again"));
    await successor.flush();
    await successor.close();
    expect(await texts(path)).toEqual(["seed", "held", "from the new holder", "the new holder again"]);
  });

  it("moves from a half-connected holder (its client side reset, the server side left open) within the lease; its next append is refused", async (context) => {
    const cut = await proxy(context);
    const holderPort = portThrough(context, cut);
    const path = await seedSession(direct, "/half");
    const holder = await SessionManager.open(holderPort, path);
    holder.appendMessage(userMsg("held through the proxy"));
    await holder.flush();
    const [{ pid }] = (await sql<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l JOIN ${schema}.locks k ON ((l.classid::bigint << 32) | l.objid::bigint) = k.live_key WHERE l.locktype = 'advisory' AND k.key = $1`,
      [path],
    )) as [{ pid: number }];

    // The holder cannot reach the server any more either: nothing of it renews or gives up the lock.
    cut.setMode("reset-client-side");
    const reset = performance.now();
    const { lock, ms } = await takeOver(direct, path, reset, LEASE_MS + 5000);
    console.info(`lock moved from a half-connected holder after ${ms.toFixed(0)} ms (leaseMs ${LEASE_MS})`);
    expect(ms).toBeLessThanOrEqual(LEASE_MS + SLACK_MS);
    // The orphaned backend was ended by the one that took the lock over.
    await waitFor("the orphaned backend to end", async () => ((await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length === 0 ? true : undefined));
    await lock.release();

    holder.appendMessage(userMsg("after the reset"));
    const refused = await timeToError(holder.flush());
    expect(refused.error).toMatchObject({ code: "persist-failed" });
    expect(await texts(path)).toEqual(["seed", "held through the proxy"]);
  });

  it("after its client side is reset, the same process reopens its session at once: the port ends its orphaned backend and gives the lost lock up", async (context) => {
    const cut = await proxy(context);
    const port = portThrough(context, cut);
    const path = await seedSession(direct, "/reopen");
    const failed = await SessionManager.open(port, path);
    failed.appendMessage(userMsg("first"));
    await failed.flush();
    const [{ pid }] = (await sql<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l JOIN ${schema}.locks k ON ((l.classid::bigint << 32) | l.objid::bigint) = k.live_key WHERE l.locktype = 'advisory' AND k.key = $1`,
      [path],
    )) as [{ pid: number }];

    cut.setMode("reset-client-side");
    cut.setMode("pass"); // new connections get through again
    failed.appendMessage(userMsg("lost with the connection"));
    await expect(failed.flush()).rejects.toMatchObject({ code: "persist-failed" });

    // A new SessionManager on the same path, the failed one left open.
    const asked = performance.now();
    const reopened = await SessionManager.open(port, path);
    const reopenMs = performance.now() - asked;
    await waitFor("the orphaned backend to end", async () => ((await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length === 0 ? true : undefined));
    const orphanGoneMs = performance.now() - asked;
    console.info(`after a client-side reset: reopened the session in ${reopenMs.toFixed(0)} ms; the orphaned backend gone ${orphanGoneMs.toFixed(0)} ms after`);
    expect(reopenMs).toBeLessThan(2000);
    reopened.appendMessage(userMsg("after reopening"));
    await reopened.flush();
    await reopened.close();
    await failed.close().catch(() => {});
    expect(await texts(path)).toEqual(["seed", "first", "after reopening"]);
  });
});

describe("pool size", () => {
  it("a pool smaller than what the port holds open is refused with invalid, its own or a caller's", async (context) => {
    for (const maxConnections of [1, 2]) {
      expect(() => postgresStorage({ connection: pgUrl(), schema, maxConnections })).toThrow(
        expect.objectContaining({ code: "invalid", message: expect.stringContaining(`maxConnections is ${maxConnections}; the port needs at least 3 connections`) }),
      );
    }
    const small = new pg.Pool({ connectionString: pgUrl(), max: 2 });
    atEnd(context, () => small.end());
    expect(() => postgresStorage({ connection: small, schema })).toThrow(expect.objectContaining({ code: "invalid", message: expect.stringContaining("the pg.Pool's max is 2") }));
  });

  it("with the smallest pool allowed (3, its own or a caller's), a lock, a watch, appends, a large write and reads all complete", async (context) => {
    const pool = new pg.Pool({ connectionString: pgUrl(), max: 3 });
    atEnd(context, () => pool.end());
    for (const [what, port] of [
      ["maxConnections 3", postgresStorage({ connection: pgUrl(), schema, maxConnections: 3 })],
      ["a caller's pool of max 3", postgresStorage({ connection: pool, schema })],
    ] as const) {
      atEnd(context, () => port.close());
      const started = performance.now();
      const seen: string[] = [];
      const watch = await port.watch("small", (path) => seen.push(path));
      const sm = await SessionManager.open(port, await seedSession(port, "/small-pool"));
      sm.appendMessage(userMsg("an entry"));
      await sm.flush();
      const big = new Uint8Array(3 << 20).fill(7);
      await Promise.all([port.write("small/big", big), port.stat(sm.getSessionFile()!), port.list("sessions"), port.append("small/log", new Uint8Array([1]))]);
      expect((await port.stat("small/big"))?.size).toBe(big.length);
      await waitFor("the watch to see both files", () => (seen.includes("small/big") && seen.includes("small/log") ? true : undefined));
      console.info(`pool of 3 (${what}): lock, watch, appends, a 3 MiB write and reads in ${(performance.now() - started).toFixed(0)} ms`);
      await watch.close();
      await sm.close();
      await port.close();
    }
  });
});
