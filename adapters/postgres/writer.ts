/**
 * The port's writing side: mutations in call order per file, and the writer locks.
 *
 * Two lanes. Small mutations run one after another on the port's writing connection (one taken
 * from the pool while the port lives); appends to one file that queue up behind a running
 * statement go out as one statement, and appends to several files issued together as one
 * transaction, up to BATCH_BYTES. A write or append larger than BULK_BYTES runs on a connection
 * of its own, as one transaction of statements of BULK_PART_BYTES, each sent once the small
 * mutations queued meanwhile are done (or after BULK_YIELD_MS): a 64 MiB write used to hold every
 * other file's mutations for its whole run, and one statement of it for its whole size. Later
 * mutations of its file wait for it.
 *
 * Locks are rows with a lease and a fencing token (schema.ts): the holder renews the lease every
 * leaseMs / 3 on the writing connection, which also holds, while it lives and talks to the server
 * directly, a session advisory lock that tells others it is alive. A write to a locked file
 * carries the lock's token, and the server refuses it once another writer has taken the lock
 * over, whichever connection it comes on: no split brain, behind a pooler too.
 *
 * A lock is lost when its lease could not be kept: the writing connection failed (its lease
 * would go unrenewed), a renewal found it taken over, or a write of its file ended with its
 * outcome unknown. The port then refuses writes to that file until the lock is released or taken
 * again (a new SessionManager on the file may take it at once, the failed one's lock is dead).
 * After the writing connection failed, the port's next connection ends the old backend if it
 * still lives (a half-connected orphan) and gives up its lost locks' rows, so others need not
 * wait for the lease.
 */
import { hostname } from "node:os";
import type pg from "pg";
import { StorageError, type StorageLock } from "../../src/port.js";
import { concat } from "../kit/bytes.js";
import { collisionError } from "../kit/collision.js";
import { checkout, isDirect, isTimedOut, timedQuery, type Deadlines } from "./connection.js";
import { isConnectionLost, toStorageError } from "./errors.js";
import { inTheWayExpression } from "./queries.js";
import { quoted } from "./schema.js";

export type Mutation =
  | { kind: "append"; path: string; data: Uint8Array }
  | { kind: "write"; path: string; data: Uint8Array }
  | { kind: "truncate"; path: string; size: number }
  | { kind: "remove"; path: string }
  /** Resolves once every earlier mutation of the file is committed ("" : of every file). */
  | { kind: "barrier"; path: string };

/** Appends to several files in one transaction (the files sorted by path). */
interface AppendMany {
  kind: "append-many";
  paths: string[];
  data: Uint8Array[];
}

/** Largest batch of appends sent as one statement on the writing connection. */
const BATCH_BYTES = 1 << 20;

/** A write or append larger than this runs on a connection of its own. */
const BULK_BYTES = 1 << 20;

/**
 * The statements of such a write carry this many bytes each (a multiple of CHUNK_BYTES). Measured
 * with a flush loop beside a 64 MiB write on a loaded 2-core machine: 256 KiB kept the flushes'
 * median at the control's, 1 and 4 MiB did not (the write alone: 1.6 s at 256 KiB, 1.2 s at 4 MiB).
 */
const BULK_PART_BYTES = 256 << 10;

/** Longest a bulk statement waits for the writing connection's queue to empty (small mutations go first). */
const BULK_YIELD_MS = 20;

interface Queued {
  mutation: Mutation;
  resolve(): void;
  reject(error: unknown): void;
}

interface Connection {
  client: pg.PoolClient;
  /** Its backend, to end it should the connection be lost while the backend lives on. */
  pid: number;
  started: string;
  /** No pooler between: the advisory lock that shows a holder alive is the holder's own. */
  direct: boolean;
}

export interface WriterSettings {
  deadlines: Deadlines;
  leaseMs: number;
}

export class Writer {
  private readonly queue: Queued[] = [];
  private pumping = false;
  /** Called when the queue has emptied (bulk statements wait for it). */
  private readonly onIdle = new Set<() => void>();
  /** Files with a bulk mutation running, and their mutations that wait for it. */
  private readonly busy = new Map<string, Queued[]>();
  private readonly bulks = new Set<Promise<void>>();
  private connection: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  /** The backend of the writing connection that failed last: ended by the next connection. */
  private orphan: { pid: number; started: string } | undefined;
  /** Lock keys held, with their tokens. */
  private readonly held = new Map<string, string>();
  /** Lock keys lost while held, with their tokens: their files refuse writes until released. */
  private readonly lost = new Map<string, string>();
  private renewal: ReturnType<typeof setInterval> | undefined;
  /** The last use of the writing connection: uses go one after another (a pg client runs one query at a time). */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly owner = `sessionkit pid ${process.pid} on ${hostname()}`;
  private closing = false;

  constructor(
    private readonly pool: () => Promise<pg.Pool>,
    private readonly schema: string,
    private readonly settings: WriterSettings,
  ) {}

  run(mutation: Mutation): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue([{ mutation, resolve, reject }]));
  }

  async acquireLock(key: string): Promise<StorageLock> {
    if (this.held.has(key)) throw locked(key, "this port");
    const replace = this.lost.get(key) ?? null;
    this.held.set(key, ""); // reserved while the query runs: a second call fails at once
    let token: string;
    try {
      const outcome = await this.onConnection("lock", key, (connection) =>
        timedQuery<{ token: string | null; holder: string | null }>(
          connection.client,
          this.settings.deadlines,
          "lock",
          key,
          `SELECT token::text, holder FROM ${quoted(this.schema)}.acquire_lock($1, $2, $3, $4, $5, $6)`,
          [key, this.owner, this.settings.leaseMs, connection.direct, replace, this.settings.deadlines.lockMs],
        ),
      );
      const row = outcome.rows[0];
      if (!row?.token) throw locked(key, row?.holder ?? "another writer");
      token = row.token;
    } catch (error) {
      if (this.held.get(key) === "") this.held.delete(key);
      throw error;
    }
    this.held.set(key, token);
    if (this.lost.get(key) === replace) this.lost.delete(key);
    this.renewal ??= setInterval(() => void this.renew(), this.settings.leaseMs / 3).unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        if (this.lost.get(key) === token) {
          this.lost.delete(key); // its row went with the failure, or goes at the next connection
          return;
        }
        if (this.held.get(key) !== token) return;
        this.held.delete(key);
        this.stopRenewalWhenIdle();
        // Only a failed connection fails here: the lease then lapses, and the backend is ended.
        await this.onConnection("unlock", key, (connection) =>
          timedQuery(connection.client, this.settings.deadlines, "unlock", key, `SELECT ${quoted(this.schema)}.release_lock($1, $2)`, [key, token]),
        ).catch(() => {});
      },
    };
  }

  /** Waits for queued mutations, then gives the connection back without any lock on it. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      // Bulk mutations hand their file's waiting mutations back to the queue when they end.
      for (;;) {
        await this.run({ kind: "barrier", path: "" }).catch(() => {});
        if (this.bulks.size === 0) break;
        await Promise.all(this.bulks);
      }
      clearInterval(this.renewal);
      this.renewal = undefined;
      // After the connection's earlier uses (a renewal, a clean-up), so that none outlives close.
      await this.exclusive(async () => {
        const connection = this.connection;
        const locks = [...this.held, ...this.lost];
        this.connection = undefined;
        this.held.clear();
        this.lost.clear();
        if (!connection) return;
        try {
          for (const [key, token] of locks) {
            await timedQuery(connection.client, this.settings.deadlines, "unlock", key, `SELECT ${quoted(this.schema)}.release_lock($1, $2)`, [key, token]);
          }
          connection.client.release();
        } catch (error) {
          connection.client.release(error as Error);
        }
      });
    } finally {
      this.closing = false;
    }
  }

  private enqueue(items: Queued[]): void {
    this.queue.push(...items);
    if (!this.pumping) {
      this.pumping = true;
      // One microtask later: appends issued in the same tick join the first statement.
      queueMicrotask(() => void this.pump());
    }
  }

  private async pump(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      const { mutation } = next;
      const parked = this.busy.get(mutation.path);
      if (parked) {
        parked.push(next);
        continue;
      }
      if ((mutation.kind === "append" || mutation.kind === "write") && mutation.data.length > BULK_BYTES) {
        this.startBulk(next, mutation);
        continue;
      }
      if (mutation.kind !== "append") {
        await this.settle([next], () => this.execute(mutation));
        continue;
      }
      const groups = this.takeAppends(next);
      if (groups.length === 1) {
        await this.settle(groups[0]!, () => this.execute(merged(groups[0]!)));
        continue;
      }
      // Appends to several files: one transaction, one commit. When it fails (a bad path, say),
      // nothing of it landed: each file's appends run alone, so each caller gets its own outcome.
      const all = groups.flat();
      const batch = groups.map(merged);
      try {
        await this.execute({ kind: "append-many", paths: batch.map((m) => m.path), data: batch.map((m) => m.data) });
        for (const queued of all) queued.resolve();
      } catch (error) {
        // A lost connection may have lost the reply to a commit: running again could append twice.
        if (isConnectionLost((error as { cause?: unknown }).cause ?? error) || isTimedOut(error)) {
          for (const queued of all) queued.reject(forCaller(error, queued.mutation.path));
          continue;
        }
        for (const [i, group] of groups.entries()) await this.settle(group, () => this.execute(batch[i]!));
      }
    }
    this.pumping = false;
    for (const wake of this.onIdle) wake();
  }

  /** Resolves once the writing connection's queue is empty, or after BULK_YIELD_MS. */
  private yieldToSmall(): Promise<void> {
    if (!this.pumping) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.onIdle.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, BULK_YIELD_MS);
      this.onIdle.add(wake);
    });
  }

  private async settle(callers: Queued[], run: () => Promise<void>): Promise<void> {
    try {
      await run();
      for (const queued of callers) queued.resolve();
    } catch (error) {
      for (const queued of callers) queued.reject(error);
    }
  }

  /**
   * `first` and the appends queued after it that may go with it, taken off the queue, grouped per
   * file (call order kept within a file; files sorted, so that concurrent batches lock file rows in
   * one order). An append may go unless an earlier queued operation on its file may not (an append
   * to a file never overtakes another operation on it), up to BATCH_BYTES; a barrier on every file
   * (close) ends the batch.
   */
  private takeAppends(first: Queued): Queued[][] {
    const groups = new Map<string, Queued[]>([[first.mutation.path, [first]]]);
    const blocked = new Set<string>(this.busy.keys());
    let bytes = (first.mutation as { data: Uint8Array }).data.length;
    for (let i = 0; i < this.queue.length; ) {
      const { mutation } = this.queue[i]!;
      if (mutation.kind === "barrier" && mutation.path === "") break;
      if (mutation.kind !== "append" || blocked.has(mutation.path) || bytes + mutation.data.length > BATCH_BYTES) {
        blocked.add(mutation.path);
        i++;
        continue;
      }
      bytes += mutation.data.length;
      const [queued] = this.queue.splice(i, 1);
      const group = groups.get(mutation.path);
      if (group) group.push(queued!);
      else groups.set(mutation.path, [queued!]);
    }
    return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
  }

  private async execute(mutation: Mutation | AppendMany): Promise<void> {
    if (mutation.kind === "barrier") return;
    const path = mutation.kind === "append-many" ? "" : mutation.path;
    const paths = mutation.kind === "append-many" ? mutation.paths : [path];
    for (const each of paths) this.refuseLost(mutation.kind, each);
    const s = quoted(this.schema);
    const lockMs = this.settings.deadlines.lockMs;
    const token = this.held.get(path) || null;
    const [sql, params]: [string, unknown[]] =
      mutation.kind === "append-many"
        ? [`SELECT ${s}.append_many($1, $2, $3, $4)`, [mutation.paths, mutation.data.map(bufferOf), mutation.paths.map((p) => this.held.get(p) || null), lockMs]]
        : mutation.kind === "append" || mutation.kind === "write"
          ? [`SELECT ${s}.${mutation.kind}($1, $2, $3, $4)`, [path, bufferOf(mutation.data), token, lockMs]]
          : mutation.kind === "truncate"
            ? [`SELECT ${s}.truncate($1, $2, $3, $4)`, [path, mutation.size, token, lockMs]]
            : // Nothing to remove: a file or directory in the way is reported in the same statement.
              [`SELECT ${s}.remove($1, $2, $3), ${inTheWayExpression(s, "$1", "$4")} AS in_the_way`, [path, token, lockMs, parentPaths(path)]];
    let inTheWay: string | null | undefined;
    try {
      const { rows } = await this.onConnection(mutation.kind, path, (connection) =>
        timedQuery<{ in_the_way?: string | null }>(connection.client, this.settings.deadlines, mutation.kind, path, sql, params),
      );
      inTheWay = rows[0]?.in_the_way;
    } catch (error) {
      // Taken over (a batch's failing file is found when its appends run alone).
      if (mutation.kind !== "append-many" && error instanceof StorageError && error.code === "locked") this.lose(path);
      if (mutation.kind === "truncate" && error instanceof StorageError && error.code === "not-found") inTheWay = await this.inTheWay(path).catch(() => null);
      if (!inTheWay) throw error;
    }
    if (inTheWay) throw collisionError(mutation.kind, path, { path: inTheWay, kind: inTheWay === path ? "dir" : "file" });
  }

  /** What keeps `path` from being a file (see inTheWayExpression); null when nothing does. */
  private async inTheWay(path: string): Promise<string | null> {
    const { rows } = await this.onConnection("truncate", path, (connection) =>
      timedQuery<{ in_the_way: string | null }>(connection.client, this.settings.deadlines, "truncate", path, `SELECT ${inTheWayExpression(quoted(this.schema), "$1", "$2")} AS in_the_way`, [
        path,
        parentPaths(path),
      ]),
    );
    return rows[0]?.in_the_way ?? null;
  }

  /** Runs a large write or append on a connection of its own; its file's later mutations wait. */
  private startBulk(queued: Queued, mutation: { kind: "append" | "write"; path: string; data: Uint8Array }): void {
    this.busy.set(mutation.path, []);
    const done = this.settle([queued], () => this.bulk(mutation)).finally(() => {
      this.bulks.delete(done);
      // Its file's mutations, parked or still queued, in call order behind the rest.
      const waiting = this.busy.get(mutation.path)!;
      this.busy.delete(mutation.path);
      for (let i = 0; i < this.queue.length; ) {
        if (this.queue[i]!.mutation.path === mutation.path) waiting.push(...this.queue.splice(i, 1));
        else i++;
      }
      this.enqueue(waiting);
    });
    this.bulks.add(done);
  }

  private async bulk({ kind, path, data }: { kind: "append" | "write"; path: string; data: Uint8Array }): Promise<void> {
    this.refuseLost(kind, path);
    const { deadlines } = this.settings;
    const s = quoted(this.schema);
    const client = await checkout(await this.pool(), deadlines, kind, path);
    const query = (text: string, values?: unknown[]) => timedQuery(client, deadlines, kind, path, text, values);
    let failure: unknown;
    try {
      await query("BEGIN");
      // A connection that dies between statements must not keep the file's row locked.
      await query(`SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, 2 * deadlines.statementMs)}`);
      for (let at = 0; at < data.length; at += BULK_PART_BYTES) {
        await this.yieldToSmall();
        const part = bufferOf(data.subarray(at, at + BULK_PART_BYTES));
        const fn = at === 0 && kind === "write" ? "write" : "append";
        await query(`SELECT ${s}.${fn}($1, $2, $3, $4)`, [path, part, this.held.get(path) || null, deadlines.lockMs]);
      }
      await query("COMMIT");
    } catch (error) {
      failure = error;
      const lost = isConnectionLost(error) || isTimedOut(error);
      if (!lost) await client.query("ROLLBACK").catch(() => {});
      // A commit whose reply was lost may have landed: the file's lock cannot vouch for it.
      if (lost || (error instanceof StorageError && error.code === "locked")) this.lose(path);
      throw toStorageError(error, kind, path, deadlines.lockMs);
    } finally {
      client.release(failure !== undefined && (isConnectionLost(failure) || isTimedOut(failure)) ? (failure as Error) : undefined);
    }
  }

  private refuseLost(action: string, path: string): void {
    if (this.lost.has(path)) {
      throw new StorageError("io", `postgres ${action} ${JSON.stringify(path)}: this port lost its lock on it (connection lost or lease lapsed); release the lock and take it again`, {
        path,
      });
    }
  }

  /** Renews every held lock's lease; the ones found taken over are lost. */
  private async renew(): Promise<void> {
    const locks = [...this.held].filter(([, token]) => token !== "");
    if (locks.length === 0) return;
    try {
      const { rows } = await this.onConnection("renew lock", "", (connection) =>
        timedQuery<{ key: string }>(connection.client, this.settings.deadlines, "renew lock", "", `SELECT ${quoted(this.schema)}.renew_locks($1, $2) AS key`, [
          locks.map(([key]) => key),
          locks.map(([, token]) => token),
        ]),
      );
      const kept = new Set(rows.map((row) => row.key));
      for (const [key, token] of locks) if (!kept.has(key) && this.held.get(key) === token) this.lose(key);
    } catch {
      // A failed connection lost every lock already (onConnection); else the next renewal tries again.
    }
  }

  /**
   * Marks a held lock lost. Unless its connection is gone (the next one cleans up), what is left of
   * it is given up at once: its row if still ours, and the advisory lock that shows it alive, which
   * would otherwise have the next writer end this port's healthy connection once the lease lapsed.
   */
  private lose(key: string, connectionGone = false): void {
    const token = this.held.get(key);
    if (!token) return;
    this.held.delete(key);
    this.lost.set(key, token);
    this.stopRenewalWhenIdle();
    if (connectionGone) return;
    void this.onConnection("unlock", key, (connection) =>
      timedQuery(connection.client, this.settings.deadlines, "unlock", key, `SELECT ${quoted(this.schema)}.release_lock($1, $2)`, [key, token]),
    ).catch(() => {});
  }

  private stopRenewalWhenIdle(): void {
    if (this.held.size > 0) return;
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /** Runs `use` on the writing connection, after its earlier uses; a lost connection is dropped. */
  private onConnection<T>(action: string, path: string, use: (connection: Connection) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const connection = await this.connect(action, path);
      try {
        return await use(connection);
      } catch (error) {
        if (isConnectionLost(error) || isTimedOut(error)) this.drop(connection, error);
        throw toStorageError(error, action, path, this.settings.deadlines.lockMs);
      }
    });
  }

  private exclusive<T>(use: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(use);
    this.tail = result.catch(() => {});
    return result;
  }

  private connect(action: string, path: string): Promise<Connection> {
    if (this.connection) return Promise.resolve(this.connection);
    this.connecting ??= (async () => {
      const { deadlines } = this.settings;
      const client = await checkout(await this.pool(), deadlines, action, path);
      let connection: Connection;
      try {
        const { rows } = await timedQuery<{ pid: number; started: string }>(
          client,
          deadlines,
          action,
          path,
          "SELECT pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()",
        );
        const { pid, started } = rows[0]!;
        connection = { client, pid, started, direct: isDirect(client, pid) };
        await this.cleanUp(connection, action, path);
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      // A connection that fails while idle reports it here; its locks are lost.
      client.on("error", (error) => this.drop(connection, error));
      this.connection = connection;
      return connection;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * After the writing connection failed: ends its backend if that still lives (a connection cut
   * on the client's side leaves it idle, holding the advisory locks that show a holder alive), and
   * gives up the rows of the locks lost with it.
   */
  private async cleanUp(connection: Connection, action: string, path: string): Promise<void> {
    const orphan = this.orphan;
    this.orphan = undefined;
    const { deadlines } = this.settings;
    if (orphan && connection.direct) {
      await timedQuery(connection.client, deadlines, action, path, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz", [
        orphan.pid,
        orphan.started,
      ]);
    }
    for (const [key, token] of this.lost) {
      await timedQuery(connection.client, deadlines, action, path, `SELECT ${quoted(this.schema)}.release_lock($1, $2)`, [key, token]);
    }
  }

  private drop(connection: Connection, error: unknown): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    if (connection.direct) this.orphan = { pid: connection.pid, started: connection.started };
    for (const key of [...this.held.keys()]) this.lose(key, true);
    connection.client.release(error instanceof Error ? error : new Error(String(error)));
    // Give the lost locks up now rather than at the next use, when the server can be reached.
    void this.exclusive(async () => {
      if (!this.closing && this.lost.size > 0) await this.connect("unlock", "");
    }).catch(() => {});
  }
}

/** "a/b/c" → ["a", "a/b"]. */
function parentPaths(path: string): string[] {
  const parents: string[] = [];
  for (let at = path.indexOf("/"); at >= 0; at = path.indexOf("/", at + 1)) parents.push(path.slice(0, at));
  return parents;
}

/** A batch's failure as one of its callers sees it: about that caller's file. */
function forCaller(error: unknown, path: string): unknown {
  if (!(error instanceof StorageError)) return error;
  return new StorageError(error.code, error.message.replace("postgres append-many:", `postgres append ${JSON.stringify(path)}:`), { path, cause: error });
}

/** One file's queued appends as one append. */
function merged(group: Queued[]): { kind: "append"; path: string; data: Uint8Array } {
  const { path } = group[0]!.mutation;
  const data = group.length === 1 ? (group[0]!.mutation as { data: Uint8Array }).data : concat(group.map((q) => (q.mutation as { data: Uint8Array }).data));
  return { kind: "append", path, data };
}

function locked(key: string, holder: string): StorageError {
  return new StorageError("locked", `${key} is locked by ${holder}`, { path: key });
}

/** The bytes as a Buffer without copying (pg sends Buffers as binary parameters). */
function bufferOf(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
