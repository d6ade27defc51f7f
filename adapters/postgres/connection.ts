/**
 * Deadlines on every wait for the server, so that a server or network that stops answering is a
 * StorageError "io" naming the operation and the wait, never a promise pending for good:
 *
 *   connect    a connection from the pool within connectTimeoutMs (a new one's TCP connect and
 *              startup included);
 *   statement  while a statement is outstanding, the socket makes progress (a byte received, or
 *              buffered bytes accepted by the kernel) at least every statementTimeoutMs; a
 *              connection silent for longer is destroyed (a server-side statement_timeout cannot
 *              help when the server, or the path to it, is what stopped);
 *   lock       the mutations wait at most lockTimeoutMs for another transaction's row or advisory
 *              lock (PostgreSQL's lock_timeout, set for their transaction only, which a pooler
 *              in transaction mode keeps apart; see schema.ts).
 */
import type { Socket } from "node:net";
import type pg from "pg";
import { StorageError } from "../../src/port.js";
import { toStorageError } from "./errors.js";

export interface Deadlines {
  connectMs: number;
  statementMs: number;
  lockMs: number;
}

/** "stat \"a/b\"", or the action alone for the whole store. */
function where(action: string, path: string): string {
  return path === "" ? action : `${action} ${JSON.stringify(path)}`;
}

/** Failures of the statement deadline: their connection was closed for it. */
const timedOut = new WeakSet<object>();

/** Whether `error` is the statement deadline running out (its connection is gone). */
export function isTimedOut(error: unknown): boolean {
  return typeof error === "object" && error !== null && timedOut.has(error);
}

/** A connection from the pool within the connect deadline (a late one goes back to the pool). */
export async function checkout(pool: pg.Pool, deadlines: Deadlines, action: string, path: string): Promise<pg.PoolClient> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const attempt = pool.connect();
  const late = () =>
    new StorageError(
      "io",
      `postgres ${where(action, path)}: no connection to the server within ${deadlines.connectMs} ms (connectTimeoutMs): the server does not answer, or the pool's connections all stayed busy`,
      { path },
    );
  try {
    return await Promise.race([
      attempt,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(late());
        }, deadlines.connectMs);
      }),
    ]);
  } catch (error) {
    // The port's own pool gives up at the same deadline, in its own words.
    if (timedOut || /timeout/i.test((error as Error).message)) throw late();
    throw toStorageError(error, action, path);
  } finally {
    clearTimeout(timer);
    if (timedOut) attempt.then((client) => client.release(), () => {});
  }
}

/** The socket under a pg client (pg has no public accessor for it). */
function socketOf(client: pg.ClientBase): Socket {
  return (client as unknown as { connection: { stream: Socket } }).connection.stream;
}

/**
 * Runs one statement on `client` under the statement deadline; when the connection stays silent
 * for longer, it is destroyed and the statement fails with io. The caller releases the client
 * with the error then (a destroyed connection must not go back to the pool).
 */
export async function timedQuery<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  deadlines: Deadlines,
  action: string,
  path: string,
  text: string,
  values?: unknown[],
): Promise<pg.QueryResult<Row>> {
  const socket = socketOf(client);
  let read = socket.bytesRead;
  let buffered = socket.writableLength;
  let progressAt = performance.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  // A destroyed connection reports the loss as an error event too; the statement's failure says it.
  const ignore = () => {};
  client.on("error", ignore);
  try {
    return await Promise.race([
      client.query<Row>(text, values),
      new Promise<never>((_, reject) => {
        timer = setInterval(
          () => {
            if (socket.bytesRead !== read || socket.writableLength !== buffered) {
              read = socket.bytesRead;
              buffered = socket.writableLength;
              progressAt = performance.now();
              return;
            }
            if (performance.now() - progressAt < deadlines.statementMs) return;
            const error = new StorageError(
              "io",
              `postgres ${where(action, path)}: no answer from the server for ${deadlines.statementMs} ms (statementTimeoutMs); the connection was closed`,
              { path },
            );
            timedOut.add(error);
            socket.destroy(error);
            reject(error);
          },
          Math.max(20, Math.min(1000, deadlines.statementMs / 10)),
        );
      }),
    ]);
  } finally {
    clearInterval(timer);
    client.off("error", ignore);
  }
}

/**
 * Whether the client talks to the server directly: a pooler (PgBouncer and the like) answers the
 * startup itself, with a cancel key of its own, so the backend's pid differs from the one the
 * client was given.
 */
export function isDirect(client: pg.ClientBase, backendPid: number): boolean {
  return (client as unknown as { processID: number | null }).processID === backendPid;
}
