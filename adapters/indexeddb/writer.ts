/**
 * Group commit: every mutation joins the open write batch, which takes operations until the
 * previous write transaction has completed and is then committed in one readwrite transaction,
 * "strict" if a `sync` joined it; each caller's promise settles with that transaction (docs/DESIGN.md
 * §2, "IndexedDB").
 */
import { BatchTransaction } from "./batch.js";
import type { RememberedFiles } from "./metadata-cache.js";
import { callerError, mergeAppends, type BatchOperation, type QueuedOperation } from "./operations.js";
import type { Durability } from "./schema.js";
import type { Transactions } from "./transactions.js";

interface Batch {
  callers: QueuedOperation[];
  /** "strict" once a sync joined. */
  durability: Durability;
}

export class Writer {
  /** The batch still accepting operations, if any. */
  private batch: Batch | undefined;
  /** Settles when the last write batch's transaction has completed (or failed). */
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly transactions: Transactions,
    private readonly remembered: RememberedFiles,
    /** Of the transactions no `sync` joined. */
    private readonly durability: Durability,
    /** Called once a batch has committed, with its operations that changed a file. */
    private readonly committed: (changed: BatchOperation[]) => void,
  ) {}

  get batchOpen(): boolean {
    return this.batch !== undefined;
  }

  /** Another operation took the next turn: later mutations start a new batch. */
  closeBatch(): void {
    this.batch = undefined;
  }

  /** Queues an operation into the open batch, starting one (with its own turn) if needed. */
  enqueue(operation: BatchOperation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queued = { operation, resolve, reject };
      if (this.batch) {
        this.batch.callers.push(queued);
        if (operation.kind === "sync") this.batch.durability = "strict";
        return;
      }
      const batch: Batch = { callers: [queued], durability: operation.kind === "sync" ? "strict" : this.durability };
      const turn = this.transactions.takeTurn();
      this.batch = batch;
      const closeBatch = () => {
        if (this.batch === batch) this.batch = undefined;
      };
      const steps = () => mergeAppends(batch.callers);
      // Group commit: the batch takes operations until the previous write transaction is done.
      const previous = this.lastWrite;
      const written = this.transactions.run(
        turn,
        "readwrite",
        () => batch.durability,
        "write transaction",
        operation.path,
        (tx, release, done) => new BatchTransaction(tx, done, this.remembered).apply(batch.callers, steps(), release),
        { onTurn: closeBatch, holdTurn: true, after: previous },
      );
      this.lastWrite = written.then(
        () => {},
        () => {},
      );
      written.then(
        (failures) => {
          batch.callers.forEach((caller, i) => (failures[i] ? caller.reject(failures[i]) : caller.resolve()));
          const changed = batch.callers.filter((caller, i) => !failures[i] && caller.operation.kind !== "sync" && caller.operation.kind !== "merge");
          this.committed(changed.map((caller) => caller.operation));
        },
        (error: unknown) => {
          // What the port remembered may include this batch's writes, which did not land.
          this.remembered.clear();
          batch.callers.forEach((caller) => caller.reject(callerError(caller.operation, error)));
        },
      );
    });
  }
}
