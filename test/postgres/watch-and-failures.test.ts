/**
 * What crosses connections and processes: `watch` through LISTEN/NOTIFY (another port, another
 * process, a dropped listening connection), and a writer whose connection is lost (io, its locks
 * gone with it, its locked files fenced, the port working again on a fresh connection).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { expectStorageError } from "../../src/testing/index.js";
import { dropSchema, freshSchema, openStorage, pgUrl, sql, waitFor } from "./helpers.js";
import { startWriter } from "./many-writers.js";

const encoder = new TextEncoder();

let schema: string;
let watcher: PostgresStorage;
let writer: PostgresStorage;

beforeEach(() => {
  schema = freshSchema("watch");
  watcher = openStorage(schema);
  writer = openStorage(schema);
});

afterEach(async () => {
  await watcher.close();
  await writer.close();
  await dropSchema(schema);
});

/** The backend pids of connections LISTENing on the store's channel. */
async function listenerPids(): Promise<number[]> {
  const rows = await sql<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query ILIKE $1 AND datname = current_database()", [`LISTEN "${schema}_changes"%`]);
  return rows.map((row) => row.pid);
}

describe("watch through LISTEN/NOTIFY", () => {
  it("reports each change another port commits, below the watched dir only, once live", async () => {
    const seen: string[] = [];
    const watch = await watcher.watch("sessions/--p--", (path) => seen.push(path));

    await writer.append("sessions/--p--/a.jsonl", encoder.encode("1\n"));
    await writer.write("sessions/--p--/b.jsonl", encoder.encode("2\n"));
    await writer.append("sessions/--q--/c.jsonl", encoder.encode("elsewhere\n"));
    await writer.append("sessions/--p--x/d.jsonl", encoder.encode("a sibling sharing the prefix\n"));
    await writer.truncate("sessions/--p--/a.jsonl", 0);
    await writer.remove("sessions/--p--/b.jsonl");
    await waitFor("four notifications", () => (seen.length >= 4 ? true : undefined));
    // Notifications of the others would have arrived before the last one (NOTIFY keeps commit order).
    expect(seen).toEqual(["sessions/--p--/a.jsonl", "sessions/--p--/b.jsonl", "sessions/--p--/a.jsonl", "sessions/--p--/b.jsonl"]);

    await watch.close();
    await watch.close();
    await writer.append("sessions/--p--/a.jsonl", encoder.encode("after close\n"));
    const marker: string[] = [];
    const other = await watcher.watch("", (path) => marker.push(path));
    await writer.append("marker", encoder.encode("x"));
    await waitFor("the marker", () => (marker.includes("marker") ? true : undefined));
    expect(seen).toHaveLength(4);
    await other.close();
  });

  it("reports a change made by another process", async () => {
    const seen: string[] = [];
    await watcher.watch("", (path) => seen.push(path));
    const child = startWriter(pgUrl(), schema, ["append", "from/child.txt", "hello"]);
    await new Promise((resolve) => child.child.once("exit", resolve));
    expect(child.child.exitCode).toBe(0);
    await waitFor("the child's append", () => (seen.includes("from/child.txt") ? true : undefined));
  });

  it("after its listening connection drops, reconnects and reports the watched dir, then changes again", async () => {
    const seen: string[] = [];
    await watcher.watch("logs", (path) => seen.push(path));
    const [pid] = await listenerPids();
    expect(pid).toBeDefined();
    await sql("SELECT pg_terminate_backend($1)", [pid]);

    await waitFor("the overflow report", () => (seen.includes("logs") ? true : undefined));
    await writer.append("logs/1", encoder.encode("x"));
    await waitFor("a change after reconnecting", () => (seen.includes("logs/1") ? true : undefined));
  });
});

/** The backends that show the holder of the lock on `key` alive (its row's live_key, an advisory lock: classid << 32 | objid). */
async function advisoryLockHolders(key: string): Promise<number[]> {
  const rows = await sql<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l JOIN ${schema}.locks k ON ((l.classid::bigint << 32) | l.objid::bigint) = k.live_key
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND k.key = $1`,
    [key],
  );
  return rows.map((row) => row.pid);
}

describe("a writer that loses its connection", () => {
  it("gets io, loses its locks with the connection, refuses writes to its locked files until released, and works on", async () => {
    const lock = await writer.acquireLock("s/locked");
    await writer.append("s/locked", encoder.encode("a"));
    const [holder] = await advisoryLockHolders("s/locked");
    expect(holder).toBeDefined();
    // Another connection cannot have it while the writer lives.
    await expectStorageError(watcher.acquireLock("s/locked"), "locked");

    await sql("SELECT pg_terminate_backend($1)", [holder]);
    const lost = await expectStorageError(writer.append("s/locked", encoder.encode("b")), "io");
    expect(lost.message).toContain("s/locked");

    // The lock died with the connection: another writer takes it at once.
    const taken = await watcher.acquireLock("s/locked");
    await expectStorageError(writer.append("s/locked", encoder.encode("c")), "io");
    await writer.append("s/unlocked", encoder.encode("d")); // a fresh connection for the rest
    expect(new TextDecoder().decode((await writer.read("s/unlocked"))!)).toBe("d");
    expect(new TextDecoder().decode((await writer.read("s/locked"))!)).toBe("a");

    await lock.release();
    await taken.release();
    await writer.append("s/locked", encoder.encode("e"));
    expect(new TextDecoder().decode((await writer.read("s/locked"))!)).toBe("ae");
    expect(await advisoryLockHolders("s/locked")).toEqual([]);
  });

  it("a server that cannot be reached is io, naming the operation", async () => {
    const nowhere = (await import("../../adapters/postgres/index.js")).postgresStorage({ connection: "postgres://postgres@127.0.0.1:1/postgres", schema: "x" });
    const error = await expectStorageError(nowhere.stat("a/b"), "io");
    expect(error.message).toMatch(/ECONNREFUSED|connect/);
    await nowhere.close();
  });
});
