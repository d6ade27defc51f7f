/**
 * Reading oh-my-pi's prompt history (`<agent dir>/history.db`, SQLite): the `history` table, with
 * whatever its write-ahead log (`history.db-wal`) has committed. Read, never written: the bytes are
 * copied into an in-memory, read-only SQLite (WASM), so the user's file and oh-my-pi's running
 * instance are untouched. The FTS5 table beside it is not read (search runs over the rows here).
 */
import { CodedError, type StoragePort } from "../port.js";
import { databaseFromBytes } from "../search/sqlite.js";
import { applyWal, withoutWalMode } from "./sqlite-wal.js";

export const HISTORY_DB = "history.db";

/**
 * One prompt of the history.
 * @category Prompt history
 */
export interface HistoryEntry {
  /** The prompt's number, increasing in the order prompts were added. */
  id: number;
  /** What the user typed (trimmed). */
  prompt: string;
  /** Unix time in seconds, as oh-my-pi stores it. */
  created_at: number;
  /** The working directory the prompt was typed in, when known. */
  cwd?: string;
}

/**
 * Why a history.db could not be read: "damaged" (not SQLite, or broken) or "not-history" (no `history` table).
 * @category Errors
 */
export type HistoryErrorCode = "damaged" | "not-history";

/**
 * A history.db that cannot be read: not a SQLite file, damaged, or without a `history` table.
 * @category Errors
 */
export class HistoryError extends CodedError<HistoryErrorCode> {
  /** Always "HistoryError". */
  override readonly name = "HistoryError";
  /** Storage path of the file. */
  readonly path: string;

  constructor(code: HistoryErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(code, `${path}: ${message}`, options?.cause);
    this.path = path;
  }
}

/**
 * The rows of a history.db in id order; [] when there is no such file. Throws HistoryError.
 * @category Prompt history
 */
export async function readHistoryDb(storage: StoragePort, path = HISTORY_DB): Promise<HistoryEntry[]> {
  const bytes = await storage.read(path);
  if (!bytes) return [];
  if (bytes.length === 0) return [];
  const wal = await storage.read(`${path}-wal`).catch(() => null);
  const image = wal && wal.length > 0 ? applyWal(withoutWalMode(bytes), wal) : withoutWalMode(bytes);
  if (new TextDecoder().decode(image.subarray(0, 15)) !== "SQLite format 3") throw new HistoryError("damaged", path, "not a SQLite database (bad header)");
  let db;
  try {
    db = await databaseFromBytes(image, true);
  } catch (error) {
    throw new HistoryError("damaged", path, `cannot open it: ${(error as Error).message}`, { cause: error });
  }
  try {
    let rows: unknown[][];
    try {
      const hasTable = db.selectValue("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'");
      if (hasTable === undefined) throw new HistoryError("not-history", path, "no history table (not an oh-my-pi history.db)");
      rows = db.selectArrays("SELECT id, prompt, created_at, cwd FROM history ORDER BY id");
    } catch (error) {
      if (error instanceof HistoryError) throw error;
      throw new HistoryError("damaged", path, `damaged: ${(error as Error).message.replace(/^SQLITE_\w+: sqlite3 result code \d+: /, "")}`, { cause: error });
    }
    const entries: HistoryEntry[] = [];
    for (const [id, prompt, createdAt, cwd] of rows) {
      if (typeof id !== "number" || typeof prompt !== "string" || typeof createdAt !== "number") {
        throw new HistoryError("damaged", path, `row ${String(id)}: expected (id INTEGER, prompt TEXT, created_at INTEGER), got (${typeof id}, ${typeof prompt}, ${typeof createdAt})`);
      }
      entries.push(typeof cwd === "string" ? { id, prompt, created_at: createdAt, cwd } : { id, prompt, created_at: createdAt });
    }
    return entries;
  } finally {
    db.close();
  }
}
