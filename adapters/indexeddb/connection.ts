/**
 * The port's connection to its database: opened on first use (creating the stores, or adding them
 * by an upgrade when the database exists without them), given up when another tab's upgrade or
 * the browser closes it, and reopened by the next operation.
 */
import { wrap } from "idb";
import { StorageError } from "../../src/port.js";
import { toStorageError } from "../kit/dom-errors.js";
import { createStores, hasStores, type Database } from "./schema.js";

export class Connection {
  private opening: Promise<Database> | undefined;
  /** The open connection; unset when another tab's upgrade or the browser closed it. */
  private live: Database | undefined;

  constructor(
    private readonly factory: IDBFactory | undefined,
    private readonly dbName: string,
    /** Called when the open connection is dropped: until it reopens, the database may change in any way. */
    private readonly onDropped: () => void,
    /** Called with the browser's message when it replaced the database, found corrupt, with an empty one. */
    private readonly onDataLoss?: (message: string) => void,
  ) {}

  /** The open connection, opening it first when there is none. */
  get(): Promise<Database> {
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined;
      throw toStorageError(error, `opening IndexedDB database ${JSON.stringify(this.dbName)}`);
    });
    return this.opening;
  }

  /** Whether `db` is still the open connection (not dropped since it was handed out). */
  isLive(db: Database): boolean {
    return this.live === db;
  }

  /** Drops a connection that is closed or closing, so the next operation reopens. */
  forget(db: Database | undefined): void {
    if (db === undefined || this.live !== db) return;
    this.live = undefined;
    this.opening = undefined;
    this.onDropped();
  }

  /** Closes the open connection; IDBDatabase.close() lets running transactions finish. */
  close(): void {
    this.live?.close();
    this.forget(this.live);
  }

  private async open(): Promise<Database> {
    const factory = this.factory ?? globalThis.indexedDB;
    if (factory === undefined) throw new StorageError("unsupported", "IndexedDB is not available here");
    let db = await this.openDatabase(factory, undefined);
    if (!hasStores(db)) {
      // The database exists without our stores (e.g. created by other code): add them.
      const version = db.version + 1;
      db.close();
      db = await this.openDatabase(factory, version);
    }
    this.live = db;
    return db;
  }

  /** Opens (creating or upgrading to `version` when given) and watches the connection. */
  private async openDatabase(factory: IDBFactory, version: number | undefined): Promise<Database> {
    const request = factory.open(this.dbName, version);
    request.addEventListener("upgradeneeded", (event) => {
      // Chromium's own fields (not in the standard, nor in TypeScript's DOM types).
      const { dataLoss, dataLossMessage } = event as IDBVersionChangeEvent & { dataLoss?: string; dataLossMessage?: string };
      if (dataLoss !== undefined && dataLoss !== "none") this.onDataLoss?.(dataLossMessage || `dataLoss: ${dataLoss}`);
      createStores(request.result);
    });
    const db = (await wrap(request)) as unknown as Database;
    // Another tab wants to upgrade or delete the database: let it, and reopen on our next operation.
    db.addEventListener("versionchange", () => {
      db.close();
      this.forget(db);
    });
    // The browser closed the connection (storage cleared, IndexedDB backend lost).
    db.addEventListener("close", () => this.forget(db));
    return db;
  }
}
