/**
 * SQLite (the official WebAssembly build, with FTS5) for the search index and for reading an
 * oh-my-pi history.db. One module per process, loaded on first use; databases live in WASM memory
 * and move to and from a StoragePort as whole-file bytes (sqlite3_deserialize / db export).
 * Imported on first use: listing and opening sessions never load it.
 */
import type { Database, Sqlite3Static } from "@sqlite.org/sqlite-wasm";

export type { Database };

/**
 * Options of {@link configureSqlite}.
 * @category Search
 */
export interface SqliteOptions {
  /**
   * Where the page serves sqlite3.wasm (a copy is in the package at dist/src/search/sqlite3.wasm).
   * Only needed where the bundler does not emit it and the file is not copied beside the bundle
   * (see the README's bundler notes). In Node a `file:` URL or a path.
   */
  wasmUrl?: string | URL;
}

let configuredWasmUrl: string | undefined;
let loading: Promise<Sqlite3Static> | undefined;

/** How SQLite's module is loaded: the package's own import, unless a process sets another (see {@link setSqliteModuleLoader}). */
export type SqliteModuleLoader = () => Promise<{ default: typeof import("@sqlite.org/sqlite-wasm").default }>;
let loadModule: SqliteModuleLoader = () => import("@sqlite.org/sqlite-wasm");

/**
 * Replaces how SQLite's module is loaded, before it is: the CLI compiles the package's glue with a
 * V8 code cache kept in the user's cache (cli/sqlite-code-cache.ts). No effect once SQLite is
 * loaded. Not part of the public API.
 */
export function setSqliteModuleLoader(loader: SqliteModuleLoader): void {
  if (!loading) loadModule = loader;
}

/**
 * Sets where SQLite's WebAssembly comes from; before the first search or history read.
 *
 * @throws Error once SQLite is loaded (a search or history read has run)
 * @category Search
 */
export function configureSqlite(options: SqliteOptions): void {
  if (loading) throw new Error("configureSqlite: SQLite is already loaded; call it before the first search or history read");
  configuredWasmUrl = options.wasmUrl === undefined ? undefined : String(options.wasmUrl);
}

/** Emscripten's module options; the package's typings leave sqlite3InitModule's parameter out. */
type InitModule = (options?: { locateFile: (file: string, prefix: string) => string }) => Promise<Sqlite3Static>;

export function loadSqlite(): Promise<Sqlite3Static> {
  loading ??= loadModule()
    .then(({ default: sqlite3InitModule }) => {
      // Without a configured URL the package finds sqlite3.wasm beside its own module, through a
      // `new URL("sqlite3.wasm", import.meta.url)` that Vite and webpack rewrite, and that points
      // beside the bundle in esbuild's output (where the README has it copied).
      const wasmUrl = configuredWasmUrl;
      if (wasmUrl === undefined) return sqlite3InitModule();
      return (sqlite3InitModule as InitModule)({ locateFile: (file, prefix) => (file === "sqlite3.wasm" ? wasmUrl : prefix + file) });
    })
    .then((sqlite3) => {
      // Failed statements throw; the library's console warning about each one is noise here.
      sqlite3.config.warn = () => {};
      return sqlite3;
    })
    .catch((error: unknown) => {
      loading = undefined; // let a later call try again
      throw error;
    });
  return loading;
}

/** An empty in-memory database. */
export async function emptyDatabase(): Promise<Database> {
  const sqlite3 = await loadSqlite();
  return new sqlite3.oo1.DB(":memory:");
}

/**
 * A database holding a copy of `bytes` (a SQLite file image). `readOnly` refuses writes; a
 * writable one can grow and be exported again. Damaged bytes are only found by the first query.
 */
export async function databaseFromBytes(bytes: Uint8Array, readOnly: boolean): Promise<Database> {
  const sqlite3 = await loadSqlite();
  const db = new sqlite3.oo1.DB(":memory:");
  // allocFromTypedArray wants a plain Uint8Array (not a Node Buffer).
  const image = bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pointer = sqlite3.wasm.allocFromTypedArray(image);
  const flags = sqlite3.capi.SQLITE_DESERIALIZE_FREEONCLOSE | (readOnly ? sqlite3.capi.SQLITE_DESERIALIZE_READONLY : sqlite3.capi.SQLITE_DESERIALIZE_RESIZEABLE);
  const rc = sqlite3.capi.sqlite3_deserialize(db.pointer!, "main", pointer, image.length, image.length, flags);
  if (rc !== 0) {
    db.close();
    throw new Error(`sqlite3_deserialize failed (code ${rc})`);
  }
  return db;
}

/** The database as a SQLite file image. */
export async function databaseBytes(db: Database): Promise<Uint8Array> {
  const sqlite3 = await loadSqlite();
  return sqlite3.capi.sqlite3_js_db_export(db);
}
