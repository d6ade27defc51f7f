/**
 * The port's writing connection: one connection taken from the pool for the port's life, which
 * runs every mutation in call order and holds the port's advisory locks.
 *
 * Why one connection for both: a session-level advisory lock lives exactly as long as the
 * connection that took it, so a writer process that dies or loses its connection loses its locks
 * with it, and another may take them at once. Were the writes sent on other connections, a
 * writer whose lock connection had dropped could still land an append after another writer took
 * the lock. Here the writes of a locked file go over the very connection that holds its lock: once
 * it is gone, they fail, and the port refuses writes to the files whose locks it lost until those
 * locks are released (a fresh connection does not hold them).
 *
 * Mutations queue in call order. Appends to one file that queue up behind a running statement
 * (no other operation on that file between them) go out as one statement; appends issued in one
 * tick do too.
 */
import type pg from "pg";
import { StorageError, type StorageLock } from "../../src/port.js";
import { concat } from "../kit/bytes.js";
import { isConnectionLost, toStorageError } from "./errors.js";

export type Mutation =
  | { kind: "append"; path: string; data: Uint8Array }
  | { kind: "write"; path: string; data: Uint8Array }
  | { kind: "truncate"; path: string; size: number }
  | { kind: "remove"; path: string }
  /** Resolves once every earlier mutation is committed. */
  | { kind: "barrier"; path: string };

/** Appends to several files in one transaction (the files sorted by path). */
interface AppendMany {
  kind: "append-many";
  paths: string[];
  data: Uint8Array[];
}

/** Largest batch of appends to several files sent as one statement. */
const BATCH_BYTES = 8 << 20;

interface Queued {
  mutation: Mutation;
  resolve(): void;
  reject(error: unknown): void;
}

export class Writer {
  private readonly queue: Queued[] = [];
  private pumping = false;
  private connection: { client: pg.PoolClient; generation: number } | undefined;
  private connecting: Promise<{ client: pg.PoolClient; generation: number }> | undefined;
  private generation = 0;
  /** Lock keys held on the current connection. */
  private readonly held = new Set<string>();
  /** Lock keys whose connection dropped while held: their files refuse writes until released. */
  private readonly lost = new Set<string>();
  /** The last use of the connection: uses go one after another (a pg client runs one query at a time). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly pool: () => Promise<pg.Pool>,
    private readonly schema: string,
  ) {}

  run(mutation: Mutation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ mutation, resolve, reject });
      if (!this.pumping) {
        this.pumping = true;
        // One microtask later: appends issued in the same tick join the first statement.
        queueMicrotask(() => void this.pump());
      }
    });
  }

  async acquireLock(key: string): Promise<StorageLock> {
    if (this.held.has(key) || this.lost.has(key)) throw locked(key, "this port");
    this.held.add(key); // reserved while the query runs: a second call fails at once
    let generation: number;
    try {
      const holder = await this.exclusive(async () => {
        const connection = await this.connect();
        generation = connection.generation;
        const { rows } = await connection.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [this.lockName(key)]);
        if (rows[0]?.ok === true) return null;
        // Who holds it, for the message: the application name and address of its connection.
        const held = await connection.client.query<{ who: string }>(
          `SELECT format('%s (backend pid %s, client %s)', nullif(a.application_name, ''), a.pid, coalesce(host(a.client_addr), 'local socket')) AS who
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
          [this.lockName(key)],
        );
        return held.rows[0]?.who ?? "another connection";
      });
      if (holder !== null) throw locked(key, holder);
    } catch (error) {
      this.held.delete(key);
      this.lost.delete(key); // a connection that dropped during the attempt added it
      throw this.failure(error, "lock", key);
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        if (this.connection?.generation !== generation) {
          this.lost.delete(key); // died with its connection
          return;
        }
        this.held.delete(key);
        try {
          await this.exclusive(async () => {
            // Still the connection that took it (else the lock went with the one that dropped).
            if (this.connection?.generation === generation) await this.connection.client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [this.lockName(key)]);
          });
        } catch (error) {
          // Only a dropped connection fails here, and it took the lock with it.
          this.failure(error, "unlock", key);
        }
      },
    };
  }

  /** Waits for queued mutations, then gives the connection back without any lock on it. */
  async close(): Promise<void> {
    await this.run({ kind: "barrier", path: "" }).catch(() => {});
    const connection = this.connection;
    if (!connection) return;
    this.connection = undefined;
    for (const key of this.held) this.lost.add(key);
    this.held.clear();
    try {
      // A pooled connection must not carry our locks to its next user.
      await this.exclusive(() => connection.client.query("SELECT pg_advisory_unlock_all()"));
      connection.client.release();
    } catch (error) {
      connection.client.release(error as Error);
    }
  }

  private async pump(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      if (next.mutation.kind !== "append") {
        await this.settle([next], () => this.execute(next.mutation));
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
        if (isConnectionLost((error as { cause?: unknown }).cause ?? error)) {
          for (const queued of all) queued.reject(forCaller(error, queued.mutation.path));
          continue;
        }
        for (const [i, group] of groups.entries()) await this.settle(group, () => this.execute(batch[i]!));
      }
    }
    this.pumping = false;
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
    const blocked = new Set<string>();
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
    for (const each of mutation.kind === "append-many" ? mutation.paths : [path]) {
      if (this.lost.has(each)) {
        throw new StorageError("io", `postgres ${mutation.kind} ${JSON.stringify(each)}: the connection holding its lock was lost; release the lock and take it again`, { path: each });
      }
    }
    const s = this.schema;
    const [sql, params]: [string, unknown[]] =
      mutation.kind === "append-many"
        ? [`SELECT ${s}.append_many($1, $2)`, [mutation.paths, mutation.data.map(bufferOf)]]
        : mutation.kind === "append" || mutation.kind === "write"
          ? [`SELECT ${s}.${mutation.kind}($1, $2)`, [path, bufferOf(mutation.data)]]
          : mutation.kind === "truncate"
            ? [`SELECT ${s}.truncate($1, $2)`, [path, mutation.size]]
            : [`SELECT ${s}.remove($1)`, [path]];
    try {
      await this.exclusive(async () => (await this.connect()).client.query(sql, params));
    } catch (error) {
      throw this.failure(error, mutation.kind, path);
    }
  }

  private exclusive<T>(use: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(use);
    this.tail = result.catch(() => {});
    return result;
  }

  private connect(): Promise<{ client: pg.PoolClient; generation: number }> {
    if (this.connection) return Promise.resolve(this.connection);
    this.connecting ??= (async () => {
      try {
        const client = await (await this.pool()).connect();
        const connection = { client, generation: ++this.generation };
        // A connection that fails while idle reports it here; its locks are gone.
        client.on("error", (error) => this.drop(connection, error));
        this.connection = connection;
        return connection;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  /** Maps a failure; a lost connection is dropped (given back to the pool, which discards it). */
  private failure(error: unknown, action: string, path: string): StorageError {
    if (isConnectionLost(error) && this.connection) this.drop(this.connection, error);
    return toStorageError(error, action, path);
  }

  private drop(connection: { client: pg.PoolClient; generation: number }, error: unknown): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    for (const key of this.held) this.lost.add(key);
    this.held.clear();
    connection.client.release(error instanceof Error ? error : new Error(String(error)));
  }

  /** Advisory locks are per database: the key is hashed with the schema's name. */
  private lockName(key: string): string {
    return `${this.schema}:${key}`;
  }
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
