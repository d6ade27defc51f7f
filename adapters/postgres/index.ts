/**
 * PostgreSQL StoragePort (on `pg`): a store that many processes on many machines share.
 *
 * Files are chunk rows like the IndexedDB adapter's (schema.ts has the layout): an append is one
 * statement that adds a row at the file's end, or tops up the last row within 16 KiB; it never
 * rewrites the file. A range read is one statement that fetches only the chunks the range
 * overlaps (found through the (file_id, off) primary key). `write`, `truncate` and `remove` are
 * one transaction each. `list` reads the files table through its indexes and never touches the
 * chunks.
 *
 * Connections: reads go through the pool (the caller's, or one the port makes from a connection
 * string); mutations and lock leases go through one connection of it, large writes through one
 * more while they run (writer.ts explains why); `watch` holds one more while any watch is open
 * (listener.ts). So the pool must hold at least MIN_CONNECTIONS.
 *
 * Liveness: every wait for the server has a deadline (connection.ts), TCP keepalives are on in
 * the pool the port makes, and a writer's lock is a lease (writer.ts): a holder that is suspended
 * or cut off loses it within `leaseMs`, and its next write is refused.
 *
 * Durability: every mutation is committed before its promise resolves, so `sync` only waits for
 * the file's queued mutations. What a commit guarantees is the server's `synchronous_commit`: with
 * `on` (the default) the commit's WAL is flushed to the server's disk (and, with synchronous
 * standbys configured, confirmed by them) before the commit returns; with `off` a server crash
 * may lose the last few hundred milliseconds of acknowledged commits (never a torn one).
 *
 * @module sessionkit/adapters/postgres
 */
import type pg from "pg";
import {
  StorageError,
  checkByteRange,
  checkStoragePath,
  clampByteRange,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type FileToWrite,
  type StorageLock,
  type FullStoragePort,
  type StorageWatch,
} from "../../src/port.js";
import { checkout, isTimedOut, timedQuery, type Deadlines } from "./connection.js";
import { isConnectionLost, toStorageError } from "./errors.js";
import { ChangeListener } from "./listener.js";
import { NO_END, listQuery, readQuery, statQuery } from "./queries.js";
import { changeChannel, checkSchemaName, ensureSchema } from "./schema.js";
import { Writer, type Mutation } from "./writer.js";

/**
 * The part of a `pg.Pool` the port uses; a `pg.Pool` is one. Declared here so that the package's
 * types do not need `@types/pg`, and so that `pg` stays an optional peer dependency.
 */
export interface PostgresPool {
  /** Checks a client out of the pool (`pool.connect()`). */
  connect(): Promise<unknown>;
  /** Runs one statement with its parameters. */
  query(
    text: string,
    values?: unknown[],
  ): Promise<{
    /** The rows the statement returned. */
    rows: unknown[];
  }>;
  /** Ends the pool (the port calls it only on a pool it made itself). */
  end(): Promise<void>;
}

/** Options of {@link postgresStorage}. */
export interface PostgresStorageOptions {
  /**
   * A connection string (`postgres://user@host:5432/db`), or a `pg.Pool` the caller owns (the
   * port holds up to two of its connections while it lives, one more during a large write, and
   * never ends it). A
   * caller's `pg.Pool` must allow at least 3 connections (`max`), and should be made with
   * `keepAlive: true`.
   */
  connection: string | PostgresPool;
  /**
   * The schema holding the store's tables, created on first use; default "sessionkit". Not a
   * reserved word, nor `public`, `information_schema` or `pg_*`.
   */
  schema?: string;
  /**
   * Size of the pool the port makes from a connection string; default 5, at least 3 (the
   * writing connection, the listening one while a watch is open, and one to read with).
   */
  maxConnections?: number;
  /** How long to wait for a connection (a new one's TCP connect and startup included); default 5000. */
  connectTimeoutMs?: number;
  /**
   * How long the server may stay silent while a statement is outstanding before the connection
   * is given up (io); default 10000. A slow statement that keeps data flowing is not cut.
   */
  statementTimeoutMs?: number;
  /** How long a change waits for another transaction's lock on the same file (PostgreSQL's lock_timeout); default 5000. */
  lockTimeoutMs?: number;
  /**
   * A writer lock's lease: renewed every third of it; a holder that stops renewing (suspended,
   * cut off) loses its lock to the next writer once it has lapsed; default 15000.
   */
  leaseMs?: number;
  /** Idle time before TCP keepalive probes start on the pool the port makes; default 10000. */
  keepAliveMs?: number;
}

/**
 * The PostgreSQL port: a StoragePort with every optional method. `sync` waits for the file's
 * queued changes (each is committed before it resolves); a lock is a lease in the database,
 * shared with every process on it, and fences the writes of a holder that lost it; `watch` reports the changes made through any port
 * on the same schema, on any machine (LISTEN/NOTIFY); `close` waits for queued changes, releases
 * the locks and connections the port took, and ends the pool it made (a caller's pool stays open).
 */
export type PostgresStorage = FullStoragePort & {
  /** Always "postgres". */
  readonly kind: "postgres";
  /** The schema holding the store's tables. */
  readonly schema: string;
};

const DEFAULT_SCHEMA = "sessionkit";
const DEFAULT_MAX_CONNECTIONS = 5;
/** The writing connection, the listening one, and one to read with. */
const MIN_CONNECTIONS = 3;

/**
 * A StoragePort in a PostgreSQL database, for a store that many processes on many machines share.
 * The tables are created in `schema` on first use; nothing connects until the first call.
 */
export function postgresStorage(options: PostgresStorageOptions): PostgresStorage {
  return new PostgresPort(options);
}

class PostgresPort implements PostgresStorage {
  readonly kind = "postgres";
  readonly schema: string;
  private ownPool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;
  private readonly writer: Writer;
  private readonly listener: ChangeListener;

  private readonly deadlines: Deadlines;

  constructor(private readonly options: PostgresStorageOptions) {
    this.schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    checkPoolSize(options);
    this.deadlines = {
      connectMs: positive(options, "connectTimeoutMs", 5000),
      statementMs: positive(options, "statementTimeoutMs", 10_000),
      lockMs: positive(options, "lockTimeoutMs", 5000),
    };
    const pool = () => this.pool();
    this.writer = new Writer(pool, this.schema, { deadlines: this.deadlines, leaseMs: positive(options, "leaseMs", 15_000) });
    this.listener = new ChangeListener(pool, changeChannel(this.schema), this.deadlines);
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    checkStoragePath(path);
    checkByteRange(path, range);
    const start = range?.offset ?? 0;
    const end = range?.length === undefined ? NO_END : start + range.length;
    const rows = await this.query<{ size: string; off: string | null; length: number | null; data: Buffer | null }>("read", path, readQuery(this.schema), [
      path,
      start,
      end,
    ]);
    if (rows.length === 0) return null;
    const size = Number(rows[0]!.size);
    const [from, to] = clampByteRange(range, size);
    const out = new Uint8Array(to - from);
    if (from === to) return out;
    let expected: number | undefined;
    for (const row of rows) {
      if (row.off === null || row.data === null || row.length === null) continue;
      const off = Number(row.off);
      if (expected !== undefined && off !== expected) throw corrupt(path, `chunk at ${off} where ${expected} was expected`);
      if (expected === undefined && off > from) throw corrupt(path, `no chunk holds byte ${from}`);
      const at = Math.max(off, from) - from;
      out.set(row.data.subarray(0, Math.min(row.data.length, out.length - at)), at);
      expected = off + row.length;
    }
    if (expected === undefined || expected < to) throw corrupt(path, `chunks end at byte ${expected ?? 0} of ${size}`);
    return out;
  }

  async stat(path: string): Promise<FileStat | null> {
    checkStoragePath(path);
    const rows = await this.query<{ size: string; mtime_ms: number }>("stat", path, statQuery(this.schema), [path]);
    const row = rows[0];
    return row ? { size: Number(row.size), mtimeMs: row.mtime_ms } : null;
  }

  async list(dir: string): Promise<DirEntry[]> {
    checkStoragePath(dir, { allowRoot: true });
    const { text, values } = listQuery(this.schema, dir);
    const rows = await this.query<{ name: string; kind: "file" | "dir"; size: string; mtime_ms: number }>("list", dir, text, values);
    return rows.map((row) => ({ name: row.name, kind: row.kind, size: Number(row.size), mtimeMs: row.mtime_ms }));
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    // A copy: the caller may reuse its buffer before the statement goes out.
    return this.mutate({ kind: "append", path, data: data.slice() });
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    checkStoragePath(path);
    return this.mutate({ kind: "write", path, data: data.slice() });
  }

  async truncate(path: string, size: number): Promise<void> {
    checkStoragePath(path);
    if (!Number.isSafeInteger(size) || size < 0) throw new StorageError("invalid", `cannot truncate ${JSON.stringify(path)} to ${size} bytes`, { path });
    return this.mutate({ kind: "truncate", path, size });
  }

  async remove(path: string): Promise<void> {
    checkStoragePath(path);
    return this.mutate({ kind: "remove", path });
  }

  /** Every mutation has committed when it resolves: this only waits for the queued ones. */
  async sync(path: string): Promise<void> {
    checkStoragePath(path);
    return this.mutate({ kind: "barrier", path });
  }

  /** Each file written in a transaction of its own: committed, so durable, as each resolves. */
  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    return writeFilesThenSync(this, files);
  }

  async acquireLock(key: string): Promise<StorageLock> {
    checkStoragePath(key);
    await this.pool();
    return this.writer.acquireLock(key);
  }

  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    checkStoragePath(dir, { allowRoot: true });
    return this.listener.watch(dir, onChange);
  }

  /**
   * Waits for queued mutations, releases the locks and the connections it took, and ends the
   * pool it made (a later call makes a new one). A caller's pool stays open.
   */
  async close(): Promise<void> {
    await this.writer.close();
    await this.listener.stop();
    const own = this.ownPool;
    this.ownPool = undefined;
    this.ready = undefined;
    await own?.end();
  }

  private async mutate(mutation: Mutation): Promise<void> {
    await this.pool();
    return this.writer.run(mutation);
  }

  private async query<Row extends pg.QueryResultRow>(action: string, path: string, sql: string, params: unknown[]): Promise<Row[]> {
    const client = await checkout(await this.pool(), this.deadlines, action, path);
    try {
      const { rows } = await timedQuery<Row>(client, this.deadlines, action, path, sql, params);
      client.release();
      return rows;
    } catch (error) {
      // A connection that failed or timed out must not go back to the pool.
      client.release(isConnectionLost(error) || isTimedOut(error) ? (error as Error) : undefined);
      throw toStorageError(error, action, path);
    }
  }

  /** The pool, once the schema exists. */
  private pool(): Promise<pg.Pool> {
    this.ready ??= (async () => {
      const { connection } = this.options;
      let pool: pg.Pool;
      if (typeof connection === "string") {
        pool = new (await loadPg()).Pool({
          connectionString: connection,
          max: this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
          // Names the port's connections in pg_stat_activity.
          application_name: `sessionkit pid ${process.pid}`,
          connectionTimeoutMillis: this.deadlines.connectMs,
          // A peer that vanished without a word (a dead host, a dropped route) shows as a failed connection.
          keepAlive: true,
          keepAliveInitialDelayMillis: positive(this.options, "keepAliveMs", 10_000),
        });
        // An idle connection that fails is dropped by the pool; the next query takes another.
        pool.on("error", () => {});
        this.ownPool = pool;
      } else {
        pool = connection as pg.Pool;
      }
      try {
        await ensureSchema(pool, this.schema, this.deadlines);
      } catch (error) {
        if (pool === this.ownPool) this.ownPool = undefined;
        if (pool !== connection) await pool.end().catch(() => {});
        throw error;
      }
      return pool;
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw toStorageError(error, `open schema ${this.schema}`, "");
    });
    return this.ready;
  }
}

/** Refuses a pool too small for what the port holds open, which would leave reads waiting for good. */
function checkPoolSize(options: PostgresStorageOptions): void {
  const { connection } = options;
  const [max, what] =
    typeof connection === "string"
      ? [options.maxConnections ?? DEFAULT_MAX_CONNECTIONS, "maxConnections"]
      : [(connection as { options?: { max?: unknown } }).options?.max, "the pg.Pool's max"];
  if (typeof max === "number" && !(max >= MIN_CONNECTIONS)) {
    throw new StorageError(
      "invalid",
      `postgresStorage: ${what} is ${max}; the port needs at least ${MIN_CONNECTIONS} connections (one writing, one listening while a watch is open, one or more to read with)`,
    );
  }
}

/** A timing option: a positive number of milliseconds, or its default. */
function positive(options: PostgresStorageOptions, name: "connectTimeoutMs" | "statementTimeoutMs" | "lockTimeoutMs" | "leaseMs" | "keepAliveMs", fallback: number): number {
  const value = options[name] ?? fallback;
  if (!Number.isFinite(value) || value <= 0) throw new StorageError("invalid", `postgresStorage: ${name} must be a positive number of milliseconds (got ${value})`);
  return value;
}

/** `pg`, an optional peer dependency: needed only when the port makes its own pool. */
async function loadPg(): Promise<typeof pg> {
  try {
    return (await import("pg")).default;
  } catch (error) {
    throw new StorageError("unsupported", "postgresStorage with a connection string needs the `pg` package: npm install pg", { cause: error });
  }
}

function corrupt(path: string, detail: string): StorageError {
  return new StorageError("corrupt", `PostgreSQL chunks of ${JSON.stringify(path)} are inconsistent: ${detail}`, { path });
}
