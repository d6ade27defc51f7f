/**
 * Correctness where concurrency and naming used to slip: a file and a directory of one name
 * created at once by two writers, schema names that are reserved words or the server's own, and
 * a writer's lock behind PgBouncer in transaction pooling mode (where no session state lasts
 * longer than a transaction, so a session advisory lock cannot be the lock).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { SessionManager, isStorageError } from "../../src/index.js";
import { expectStorageError } from "../../src/testing/index.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dropSchema, freshSchema, openStorage, pgUrl, sql } from "./helpers.js";
import { startWriter } from "./many-writers.js";
import { startBouncer, type Bouncer } from "./pgbouncer.js";

const encoder = new TextEncoder();

describe("a file and a directory of one name", () => {
  const schema = freshSchema("race");
  let first: PostgresStorage;
  let second: PostgresStorage;

  beforeAll(() => {
    first = openStorage(schema);
    second = openStorage(schema);
  });

  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
    await dropSchema(schema);
  });

  it("`d/x` and `d/x/y` appended at once by two writers: one wins, the other is a collision, 20 times out of 20", async () => {
    await Promise.all([first.stat("warm"), second.stat("warm")]); // both pools connected
    const outcomes: string[] = [];
    for (let round = 0; round < 20; round++) {
      const dir = `r${round}/d`;
      const [file, below] = await Promise.allSettled([first.append(`${dir}/x`, encoder.encode("a file")), second.append(`${dir}/x/y`, encoder.encode("a file below"))]);
      outcomes.push(`${file.status}/${below.status}`);
      const rows = await sql<{ path: string }>(`SELECT path FROM ${schema}.files WHERE path = $1 OR path LIKE $2`, [`${dir}/x`, `${dir}/x/%`]);
      expect(rows, `round ${round}`).toHaveLength(1);
      const loser = file.status === "rejected" ? file : below;
      expect(loser.status, `round ${round}`).toBe("rejected");
      expect(isStorageError((loser as PromiseRejectedResult).reason, "collision"), `round ${round}`).toBe(true);
    }
    const counts = outcomes.reduce<Record<string, number>>((all, outcome) => ({ ...all, [outcome]: (all[outcome] ?? 0) + 1 }), {});
    console.info(`d/x vs d/x/y, 20 rounds: ${JSON.stringify(counts)} (file/below)`);
  });
});

describe("schema names", () => {
  it("reserved words and the server's or everyone's schemas are refused with invalid", () => {
    for (const name of ["full", "user", "select", "table", "all", "order"]) {
      expect(() => postgresStorage({ connection: pgUrl(), schema: name }), name).toThrow(expect.objectContaining({ code: "invalid", message: expect.stringContaining("a reserved word") }));
    }
    for (const name of ["public", "information_schema", "pg_catalog", "pg_toast", "pg_sessions"]) {
      expect(() => postgresStorage({ connection: pgUrl(), schema: name }), name).toThrow(expect.objectContaining({ code: "invalid", message: expect.stringContaining("a schema of the server") }));
    }
  });

  it("key words that are not reserved work as schema names, end to end", async () => {
    for (const name of ["values", "int", "data"]) {
      const port = postgresStorage({ connection: pgUrl(), schema: name });
      try {
        const seen: string[] = [];
        const watch = await port.watch("", (path) => seen.push(path));
        await port.append("a/b", encoder.encode("x"));
        const lock = await port.acquireLock("a/b");
        await port.append("a/b", encoder.encode("y"));
        await lock.release();
        expect(new TextDecoder().decode((await port.read("a/b"))!), name).toBe("xy");
        expect((await port.list("a")).map((entry) => entry.name), name).toEqual(["b"]);
        await watch.close();
      } finally {
        await port.close();
        await sql(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      }
    }
  });
});

describe("behind PgBouncer in transaction pooling mode (one server connection for every client)", () => {
  const schema = freshSchema("bouncer");
  let bouncer: Bouncer;

  beforeAll(async () => {
    bouncer = await startBouncer(pgUrl());
  });

  afterAll(async () => {
    await bouncer.stop();
    await dropSchema(schema);
  });

  it("a lock held by one port is refused to another, and its row holds no session state (no live_key)", async () => {
    const [a, b] = [postgresStorage({ connection: bouncer.url, schema }), postgresStorage({ connection: bouncer.url, schema })];
    try {
      const lock = await a.acquireLock("s/one");
      await a.append("s/one", encoder.encode("from a"));
      const refused = await expectStorageError(b.acquireLock("s/one"), "locked");
      expect(refused.message).toMatch(/^s\/one is locked by sessionkit pid \d+ on .+ \(lease renewed \d+ ms ago\)$/);
      expect(await sql(`SELECT live_key FROM ${schema}.locks WHERE key = 's/one'`)).toEqual([{ live_key: null }]);
      await lock.release();
      const taken = await b.acquireLock("s/one");
      await taken.release();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("a suspended holder's lock moves once its lease lapses, and its next append is refused by the fencing token", async () => {
    const port = postgresStorage({ connection: bouncer.url, schema, leaseMs: 2000 });
    try {
      const seed = await SessionManager.create(port, "/bounced");
      seed.appendMessage(userMsg("seed"));
      seed.appendMessage(assistantMsg("answer"));
      await seed.flush();
      await seed.close();
      const path = seed.getSessionFile()!;

      const holder = startWriter(bouncer.url, schema, ["hold", path], { SESSION_WRITER_OPTIONS: JSON.stringify({ leaseMs: 2000 }) });
      try {
        await holder.line((line) => line === "holding");
        // While it renews, the lock stays its own for longer than the lease.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        await expectStorageError(port.acquireLock(path), "locked");

        holder.child.kill("SIGSTOP");
        const stopped = performance.now();
        let lock;
        while (!lock && performance.now() - stopped < 10_000) {
          lock = await port.acquireLock(path).catch((error: unknown) => {
            if (!isStorageError(error, "locked")) throw error;
            return new Promise<undefined>((resolve) => setTimeout(resolve, 50));
          });
        }
        const movedMs = performance.now() - stopped;
        console.info(`behind PgBouncer: the lock moved ${movedMs.toFixed(0)} ms after SIGSTOP (leaseMs 2000)`);
        expect(lock).toBeDefined();
        expect(movedMs).toBeLessThanOrEqual(4000); // leaseMs 2000, and scheduling slack on a loaded machine
        await lock!.release();
        const successor = await SessionManager.open(port, path);
        successor.appendMessage(userMsg("from the new holder"));
        await successor.flush();

        holder.child.kill("SIGCONT");
        holder.child.stdin!.write("append from the old holder\n");
        expect(await holder.line((line) => line.startsWith("appended") || line.startsWith("refused"))).toMatch(/^refused persist-failed: .*taken over/);
        await successor.close();
        const texts = (await SessionManager.open(port, path, { readOnly: true })).getEntries().map((entry) => (entry as { message: { content: unknown } }).message.content);
        expect(texts.filter((text) => typeof text === "string")).toEqual(["seed", "held", "from the new holder"]);
      } finally {
        holder.child.kill("SIGKILL");
      }
    } finally {
      await port.close();
    }
  });
});
