/**
 * Every operation's transaction over both stores: created in the order the operations were issued
 * (which IndexedDB turns into execution order), redone once on a connection dropped under it, and
 * redone at once when remembered metadata it built on proved stale.
 */
import { unwrap } from "idb";
import { StorageError } from "../../src/port.js";
import { domErrorName, toStorageError } from "../kit/dom-errors.js";
import type { Connection } from "./connection.js";
import { StaleMeta, type RememberedFiles } from "./metadata-cache.js";
import type { Durability } from "./schema.js";

/** A place in the order of transaction creation. */
export interface Turn {
  /** Resolves once every earlier operation has created its transaction. */
  ready: Promise<void>;
  /** Lets the next operation create its transaction. */
  pass: () => void;
}

export interface RunOptions {
  /** Runs once the turn (and `after`) has come, before the transaction is created. */
  onTurn?: () => void;
  /** Keeps the turn until `body` calls `release` (or ends), instead of passing it on creation. */
  holdTurn?: boolean;
  /** The transaction is created once this has settled too. */
  after?: Promise<void>;
}

export class Transactions {
  private lastTurn: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    private readonly remembered: RememberedFiles,
  ) {}

  /** Takes the next place in transaction-creation order. */
  takeTurn(): Turn {
    const ready = this.lastTurn;
    let pass: () => void = () => {};
    this.lastTurn = new Promise<void>((resolve) => (pass = resolve));
    return { ready, pass };
  }

  /**
   * Runs `body` in a transaction over both stores and resolves after the transaction completes.
   * Transactions are created in call order (see Turn): the next one may be created once this one
   * exists, or, with `holdTurn`, once `body` calls `release` (or ends). With `after`, the
   * transaction is created once that has settled too (`onTurn` runs then). When the connection was
   * dropped (closed for another tab's upgrade, or by the browser), it reopens and retries once;
   * the retried transaction may then run after operations issued later. When `body` finds that
   * remembered metadata was stale, the attempt is aborted and retried at once, still holding the
   * turn.
   */
  async run<Mode extends IDBTransactionMode, T>(
    turn: Turn,
    mode: Mode,
    durability: () => Durability,
    action: string,
    path: string,
    body: (tx: IDBTransaction, release: () => void, done: Promise<void>) => Promise<T>,
    options?: RunOptions,
  ): Promise<T> {
    let passed = false;
    const pass = () => {
      if (!passed) turn.pass();
      passed = true;
    };
    try {
      await turn.ready;
      await options?.after;
      options?.onTurn?.();
      for (let reopened = false; ; ) {
        const db = await this.connection.get();
        let tx: IDBTransaction;
        try {
          // The raw transaction: idb's wrapper (a proxy, listeners added and removed for `done`)
          // cost page CPU per flush (bench:browser profile.appends.indexeddb, see bench/README.md;
          // figures in docs/DESIGN.md §2); reads wrap it where they need promises.
          tx = unwrap(db).transaction(["files", "chunks"], mode, { durability: durability() });
        } catch (error) {
          // InvalidStateError: the connection closed under us (versionchange, browser).
          this.connection.forget(db);
          if (!reopened && domErrorName(error) === "InvalidStateError") {
            reopened = true;
            continue;
          }
          throw toStorageError(error, `indexeddb ${action}`, path);
        } finally {
          if (!options?.holdTurn) pass();
        }
        const done = transactionDone(tx);
        done.catch(() => {}); // observed below; keeps an abort during `body` from going unhandled
        try {
          const result = await body(tx, pass, done);
          await done;
          return result;
        } catch (error) {
          abortQuietly(tx);
          if (error instanceof StaleMeta) {
            this.remembered.clear();
            continue;
          }
          if (error instanceof StorageError) throw error;
          if (!reopened && !this.connection.isLive(db)) {
            reopened = true;
            continue;
          }
          // An abort's reason (QuotaExceededError) is on tx.error; request errors only say AbortError.
          throw toStorageError(tx.error ?? error, `indexeddb ${action}`, path);
        }
      }
    } finally {
      pass();
    }
  }
}

/**
 * Settles when `tx` commits, or rejects with its error when a request fails or it aborts, as
 * idb's `tx.done` does, through the handler properties: no listeners added and removed per
 * transaction.
 */
function transactionDone(tx: IDBTransaction): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new DOMException("AbortError", "AbortError"));
  });
}

function abortQuietly(tx: IDBTransaction): void {
  try {
    tx.abort();
  } catch {
    // Already committed or aborted.
  }
}
