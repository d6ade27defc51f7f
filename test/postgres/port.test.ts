/** The postgres port: the shared conformance suite, then what is particular to it, on a real server. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import pg from "pg";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { CHUNK_BYTES, TOP_UP_BYTES } from "../../adapters/postgres/schema.js";
import { listQuery, readQuery } from "../../adapters/postgres/queries.js";
import { describeFollowSuite } from "../shared/follow-suite.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";
import { dropSchema, freshSchema, openStorage, pgUrl, sql } from "./helpers.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// One schema (and port) per test: conformance tests also work below their own directories. The
// second port is another pool over the same schema, as another process would open it.
describePortConformance(
  "postgres",
  async () => {
    const schema = freshSchema("conf");
    const ports = [openStorage(schema)];
    return {
      port: ports[0]!,
      openSecond: async () => {
        ports.push(openStorage(schema));
        return ports.at(-1)!;
      },
      cleanup: async () => {
        await Promise.all(ports.map((port) => port.close()));
        await dropSchema(schema);
      },
    };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

describeFollowSuite("postgres: writer and follower on two ports (two pools) over one schema", async () => {
  const schema = freshSchema("follow");
  const writer = openStorage(schema);
  const reader = openStorage(schema);
  return {
    writer,
    reader,
    cleanup: async () => {
      await Promise.all([writer.close(), reader.close()]);
      await dropSchema(schema);
    },
  };
});

describe("postgres port", () => {
  let schema: string;
  let port: PostgresStorage;

  beforeEach(() => {
    schema = freshSchema();
    port = openStorage(schema);
  });

  afterEach(async () => {
    await port.close();
    await dropSchema(schema);
  });

  async function chunkRows(path: string): Promise<{ off: number; length: number }[]> {
    const rows = await sql<{ off: string; length: number }>(
      `SELECT c.off, octet_length(c.data) AS length FROM ${schema}.chunks c JOIN ${schema}.files f ON f.id = c.file_id WHERE f.path = $1 ORDER BY c.off`,
      [path],
    );
    return rows.map((row) => ({ off: Number(row.off), length: row.length }));
  }

  it("creates its schema on first use, versioned, and refuses a newer layout", async () => {
    await port.append("a", encoder.encode("x"));
    expect(await sql(`SELECT version FROM ${schema}.schema_version`)).toEqual([{ version: 2 }]);

    await sql(`UPDATE ${schema}.schema_version SET version = 99`);
    const other = openStorage(schema);
    const error = await expectStorageError(other.stat("a"), "unsupported");
    expect(error.message).toContain("layout version 99");
    await other.close();
  });

  it("runs on a caller's pool; close gives its connections back holding no lock, and leaves the pool open", async () => {
    const pool = new pg.Pool({ connectionString: pgUrl(), max: 3 });
    const shared = postgresStorage({ connection: pool, schema });
    await shared.acquireLock("held/at/close");
    await shared.append("pooled", encoder.encode("x"));
    await shared.watch("", () => {});
    // The lock's row, and the advisory lock that shows its holder's connection alive.
    const [row] = await sql<{ live_key: string }>(`SELECT live_key::text FROM ${schema}.locks WHERE key = $1`, ["held/at/close"]);
    const live = () => sql(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`, [row!.live_key]);
    expect(await live()).toHaveLength(1);

    await shared.close(); // the lock was never released: close must not hand it to the pool's next user
    expect(await live()).toEqual([]);
    expect(await sql(`SELECT key FROM ${schema}.locks`)).toEqual([]);
    expect(pool.idleCount).toBe(pool.totalCount);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${schema}.files`)).rows).toEqual([{ n: 1 }]);
    await pool.end();
  });

  it("refuses a schema name that is not a plain identifier", () => {
    expect(() => postgresStorage({ connection: pgUrl(), schema: 'x"; drop table y; --' })).toThrow(/invalid PostgreSQL schema name/);
  });

  it("an append adds one row, small appends top up the last row within the bound, and no row grows past it", async () => {
    const path = "s/log";
    const line = new Uint8Array(1000).fill(0x61);
    for (let i = 0; i < 40; i++) await port.append(path, line);

    const rows = await chunkRows(path);
    expect(rows.reduce((sum, row) => sum + row.length, 0)).toBe(40_000);
    for (const row of rows) expect(row.length).toBeLessThanOrEqual(TOP_UP_BYTES);
    // 16 lines of 1000 bytes fit in 16 KiB: 40 lines make 3 rows.
    expect(rows.length).toBe(Math.ceil(40 / Math.floor(TOP_UP_BYTES / 1000)));

    await port.append(path, new Uint8Array(TOP_UP_BYTES)); // too large to top up: a row of its own
    const after = await chunkRows(path);
    expect(after.length).toBe(rows.length + 1);
    expect(after.at(-1)).toEqual({ off: 40_000, length: TOP_UP_BYTES });
  });

  it("appends to several files issued together commit in one transaction; one that fails fails alone", async () => {
    const files = Array.from({ length: 5 }, (_, i) => `batch/f${i}`);
    await Promise.all(files.map((file) => port.append(file, encoder.encode(file))));
    const xmins = await sql<{ xmin: string }>(`SELECT xmin::text FROM ${schema}.files WHERE path = ANY($1)`, [files]);
    expect(xmins).toHaveLength(5);
    expect(new Set(xmins.map((row) => row.xmin)).size).toBe(1);

    await port.append("plain", encoder.encode("a file"));
    const outcomes = await Promise.allSettled([
      port.append("batch/f0", encoder.encode("+")),
      port.append("plain/child", encoder.encode("below a file")),
      port.append("batch/f1", encoder.encode("+")),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ name: "StorageError", code: "collision", path: "plain/child" });
    expect(decoder.decode((await port.read("batch/f0"))!)).toBe("batch/f0+");
    expect(decoder.decode((await port.read("batch/f1"))!)).toBe("batch/f1+");
    expect(await port.stat("plain/child")).toBeNull();
  });

  it("a large write or append is cut into rows of CHUNK_BYTES", async () => {
    await port.write("big", new Uint8Array(2 * CHUNK_BYTES + 5));
    expect((await chunkRows("big")).map((row) => row.length)).toEqual([CHUNK_BYTES, CHUNK_BYTES, 5]);
    await port.append("big", new Uint8Array(CHUNK_BYTES + 1));
    expect((await chunkRows("big")).map((row) => row.off)).toEqual([0, CHUNK_BYTES, 2 * CHUNK_BYTES, 2 * CHUNK_BYTES + 5, 3 * CHUNK_BYTES + 5]);
  });

  it("a write over 1 MiB (its own connection, 256 KiB statements in one transaction): the file's later changes wait for it, in call order; its rows are CHUNK_BYTES", async () => {
    const big = new Uint8Array(3 * (1 << 20) + 5).fill(0x62);
    const done: string[] = [];
    const track = (name: string, promise: Promise<void>) => promise.then(() => void done.push(name));
    await Promise.all([
      track("write", port.write("bulk/file", big)),
      track("append", port.append("bulk/file", encoder.encode("tail"))),
      track("sync", port.sync("bulk/file")),
      track("other", port.append("bulk/other", encoder.encode("not held up"))),
    ]);
    expect(done.indexOf("other")).toBeLessThan(done.indexOf("write"));
    expect(done.slice(done.indexOf("write"))).toEqual(["write", "append", "sync"]);
    const stored = (await port.read("bulk/file"))!;
    expect(stored.length).toBe(big.length + 4);
    expect(decoder.decode(stored.subarray(big.length))).toBe("tail");
    const rows = await chunkRows("bulk/file");
    // 12 full rows, then the 5 bytes left topped up by the append.
    expect(rows.slice(0, -1)).toEqual(Array.from({ length: 12 }, (_, i) => ({ off: i * CHUNK_BYTES, length: CHUNK_BYTES })));
    expect(rows.at(-1)).toEqual({ off: 12 * CHUNK_BYTES, length: 9 });
  });

  it("a range read touches only the chunks it overlaps: a damaged chunk elsewhere does not matter", async () => {
    const path = "r/file";
    for (let i = 0; i < 10; i++) await port.append(path, encoder.encode(String(i).repeat(TOP_UP_BYTES)));
    const rows = await chunkRows(path);
    expect(rows.length).toBe(10);
    // Remove the 9th chunk behind the port's back.
    await sql(`DELETE FROM ${schema}.chunks WHERE off = $1`, [rows[8]!.off]);

    const range = await port.read(path, { offset: 3 * TOP_UP_BYTES - 2, length: 4 });
    expect(decoder.decode(range!)).toBe("2233");
    const error = await expectStorageError(port.read(path), "corrupt");
    expect(error.message).toContain(path);
  });

  it("list and read use the indexes: no sequential scan, and list never reads the chunks", async () => {
    await port.append("sessions/--p--/a.jsonl", encoder.encode("x"));
    await port.append("sessions/--q--/b.jsonl", encoder.encode("y"));
    // EXPLAIN the port's own queries with sequential scans ruled out wherever an index can serve.
    const client = new pg.Client(pgUrl());
    await client.connect();
    try {
      await client.query("SET enable_seqscan = off");
      const plan = async (text: string, values: unknown[]) => JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${text}`, values)).rows[0]);
      for (const dir of ["", "sessions", "sessions/--p--"]) {
        const { text, values } = listQuery(schema, dir);
        const listPlan = await plan(text, values);
        expect(listPlan, dir).not.toContain('"chunks"');
        if (dir !== "") expect(listPlan, dir).not.toContain("Seq Scan");
      }
      expect(await plan(readQuery(schema), ["sessions/--p--/a.jsonl", 0, 1])).not.toContain("Seq Scan");
    } finally {
      await client.end();
    }
    expect((await port.list("sessions")).map((e) => e.name)).toEqual(["--p--", "--q--"]);
  });
});
