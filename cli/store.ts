/**
 * Where the CLI's bytes come from: the store (a root directory in pi's layout, or a PostgreSQL
 * database), and the storage that holds a file argument.
 */
import { realpath, stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import nodePath from "node:path";
import { expandHome, nodeFsStorage } from "../adapters/node-fs/index.js";
import { findSessionPaths, isStorageError, SESSIONS_DIR, SessionManager, StorageError, type SessionInfo, type StoragePort } from "../src/index.js";
import { CliError } from "./errors.js";
import { listingProgress, type ProgressSink } from "./progress.js";
import { oneLine } from "./render.js";

/** The storage root: --root, else $PI_CODING_AGENT_DIR (as pi reads it), else ~/.pi/agent. */
export function resolveRoot(rootFlag: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  const raw = rootFlag ?? (env.PI_CODING_AGENT_DIR || "~/.pi/agent");
  return nodePath.resolve(cwd, expandHome(raw));
}

/** A port the CLI closes when the command ends (a database pool would keep the process alive). */
export type ClosableStorage = StoragePort & { close(): Promise<void> };

/** Where the CLI's sessions live: a root directory (--root) or a PostgreSQL database (--store). */
export interface CliStore {
  readonly kind: "dir" | "postgres";
  /** How messages name the store: the root directory, or the URL without its password. */
  readonly name: string;
  /** The root directory (kind "dir"). */
  readonly root: string | undefined;
  /** A new port over the store; closeAll() closes it. */
  open(): Promise<ClosableStorage>;
  /** How messages name a storage path of the store: a file path under the root, or the path itself. */
  nameOf(path: string): string;
  /** Fails with a CliError when there is nothing to read (a missing root directory). */
  requireExists(): Promise<void>;
  closeAll(): Promise<void>;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** The store of a command: --store URL, else the root directory (resolveRoot). */
export function resolveStore(flags: { root: string | undefined; store: string | undefined }, cwd: string, env: NodeJS.ProcessEnv): CliStore {
  const opened: ClosableStorage[] = [];
  const closeAll = async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
  };
  if (flags.store === undefined) {
    const root = resolveRoot(flags.root, cwd, env);
    return {
      kind: "dir",
      name: root,
      root,
      open: async () => {
        const storage = nodeFsStorage({ root });
        opened.push(storage);
        return storage;
      },
      nameOf: (path) => nodePath.join(root, ...path.split("/")),
      requireExists: () => requireDirectory(root),
      closeAll,
    };
  }
  const { connection, schema, name } = parsePostgresStore(flags.store);
  let port: Promise<ClosableStorage> | undefined;
  return {
    kind: "postgres",
    name,
    root: undefined,
    // One port (one pool) per command, however many sessions it reads.
    open: () =>
      (port ??= (async () => {
        // Loaded only for --store: other commands need no database client.
        const { postgresStorage } = await import("../adapters/postgres/index.js");
        const storage = postgresStorage({ connection, ...(schema === null ? {} : { schema }) });
        opened.push(storage);
        return storage;
      })()),
    nameOf: (path) => path,
    requireExists: async () => {},
    closeAll,
  };
}

/**
 * A --store URL: postgres://user:password@host:port/db, optionally ?schema=NAME (the schema
 * holding the store; "sessionkit" by default), which is not passed on to the server.
 */
export function parsePostgresStore(store: string): { connection: string; schema: string | null; name: string } {
  if (!POSTGRES_URL.test(store)) throw new CliError(`--store ${JSON.stringify(store)}: not a postgres:// URL`);
  let url: URL;
  try {
    url = new URL(store);
  } catch {
    throw new CliError(`--store ${JSON.stringify(store)}: not a valid URL`);
  }
  const schema = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  const connection = url.toString();
  if (url.password !== "") url.password = "***";
  if (schema !== null) url.searchParams.set("schema", schema);
  return { connection, schema, name: url.toString() };
}

/** The file's stat, null when nothing is there; any other failure is an error naming the path. */
export async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new CliError(`${path}: cannot read it (${code ?? (error as Error).message})`);
  }
}

export async function requireDirectory(dir: string): Promise<void> {
  const info = await statOrNull(dir);
  if (!info) throw new CliError(`${dir}: no such directory (the storage root; set it with --root)`);
  if (!info.isDirectory()) throw new CliError(`${dir} is not a directory (the storage root; set it with --root)`);
}

/** A session file argument: the storage that holds it and its path there. */
export interface SessionFileRef {
  /** The file as the user should read it in messages: absolute (or its path in a database store). */
  absolute: string;
  storage: ClosableStorage;
  /** Storage path of the file in `storage`. */
  path: string;
  /** How messages name a path of `storage` (a blob, the session). */
  nameOf(path: string): string;
  /** Where `storage` is: its root directory, or the database store's name. */
  location: string;
  /** True when the session is a file on disk (`absolute`), false when it lives in a database. */
  onDisk: boolean;
  /** True when `storage` is a store root (sessions/ and blobs/), false when it is the file's own directory. */
  inStore: boolean;
  /** True when `storage` is the storage root itself (--root). */
  inRoot: boolean;
}

const HEAD_BYTES = 4096;

/**
 * Finds the storage for a file argument (absolute, or relative to `cwd`). A file under `root`
 * is read through the root, so its blob refs resolve against the root's blobs/. A file laid out
 * as pi lays it out elsewhere (<agent dir>/sessions/<project>/<file>) is read through that agent
 * dir, for the same reason. Any other file is read through its own directory.
 */
export async function resolveSessionFile(arg: string, root: string | undefined, cwd: string): Promise<SessionFileRef> {
  const absolute = nodePath.resolve(cwd, arg);
  const info = await statOrNull(absolute);
  if (!info) throw new CliError(`${absolute}: no such file`);
  if (!info.isFile()) throw new CliError(`${absolute} is not a file`);
  if (info.size === 0) throw new CliError(`${absolute} is empty, not a session file`);

  const real = await realpath(absolute);
  const realRoot = root === undefined ? null : await realpath(root).catch(() => null);
  let storageRoot = nodePath.dirname(real);
  let inStore = false;
  let inRoot = false;
  if (realRoot !== null && isInside(realRoot, real)) {
    storageRoot = realRoot;
    inStore = true;
    inRoot = true;
  } else if (nodePath.basename(nodePath.dirname(nodePath.dirname(real))) === SESSIONS_DIR) {
    storageRoot = nodePath.dirname(nodePath.dirname(nodePath.dirname(real)));
    inStore = true;
  }
  const path = nodePath.relative(storageRoot, real).split(nodePath.sep).join("/");
  const storage = nodeFsStorage({ root: storageRoot });
  if (info.size <= HEAD_BYTES) {
    const bytes = await storage.read(path);
    if (bytes && new TextDecoder().decode(bytes).trim() === "") throw new CliError(`${absolute} holds only whitespace, not a session file`);
  }
  const nameOf = (p: string) => nodePath.join(storageRoot, ...p.split("/"));
  return { absolute, storage, path, nameOf, location: storageRoot, onDisk: true, inStore, inRoot };
}

function isInside(dir: string, file: string): boolean {
  const relative = nodePath.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !nodePath.isAbsolute(relative);
}

/**
 * Opens a file argument without writing anything: migrations happen in memory, no lock file is
 * made, nothing is repaired. Warnings (skipped lines, missing blobs) go to `onWarning` with the
 * absolute path in place of the storage path.
 */
export async function openReadOnly(ref: SessionFileRef, onWarning: (message: string) => void): Promise<SessionManager> {
  try {
    return await SessionManager.open(ref.storage, ref.path, {
      readOnly: true,
      onWarning: (message) => onWarning(withAbsolutePath(message, ref)),
    });
  } catch (error) {
    throw asCliError(error, ref);
  }
}

/** Replaces the storage path in a library message with the absolute file path. */
export function withAbsolutePath(message: string, ref: SessionFileRef): string {
  const escaped = ref.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Only the path as a whole word: a short file name may also occur inside other words.
  const pattern = new RegExp(`(^|[\\s"'(])${escaped}(?=$|[\\s"':),])`);
  if (pattern.test(message)) return message.replace(pattern, (_match, before: string) => before + ref.absolute);
  return `${ref.absolute}: ${message}`;
}

/** A library error about `ref` as a CliError naming the file. */
export function asCliError(error: unknown, ref: SessionFileRef): unknown {
  if (error instanceof CliError || !(error instanceof Error)) return error;
  return new CliError(withAbsolutePath(error.message, ref));
}

/**
 * A file argument, else a session id looked up among the store's sessions: the file named for
 * that exact id (pi names them <timestamp>_<id>.jsonl; its header must agree), else the one
 * session whose id starts with it (every session file is read: progress on `progressSink`). In a
 * database store, an argument with a slash that is no file on disk is a storage path there.
 */
export async function resolveSessionArgument(target: string, store: CliStore, cwd: string, progressSink: ProgressSink, label: string): Promise<SessionFileRef> {
  const absolute = nodePath.resolve(cwd, target);
  const local = await statOrNull(absolute);
  // Ids are UUIDs: an argument with a separator or a dot ("x.jsonl") can only be a file.
  const pathLike = /[/.]/.test(target) || target.includes(nodePath.sep);
  if (local || (pathLike && store.kind === "dir")) return resolveSessionFile(target, store.root, cwd);
  if (pathLike) return storeRef(store, await store.open(), target, `${absolute}: no such file, and no ${target} in ${store.name}`);
  await store.requireExists().catch(() => {
    throw new CliError(`${absolute}: no such file (and no storage root ${store.name} to look up session ids in)`);
  });
  const storage = await store.open();
  let infos: SessionInfo[];
  const progress = listingProgress(progressSink, label);
  try {
    const named: string[] = [];
    for (const path of await findSessionPaths(storage, target)) if ((await headerId(storage, path)) === target) named.push(path);
    if (named.length > 1) throw new CliError(`session id "${target}" names ${named.length} files in ${store.name}`, named.map((path) => `  ${store.nameOf(path)}`));
    if (named.length === 1) return await storeRef(store, storage, named[0]!);
    infos = await SessionManager.listAll(storage, { onProgress: progress.onProgress });
  } finally {
    progress.done();
  }
  const exact = infos.filter((info) => info.id === target);
  const matches = exact.length > 0 ? exact : infos.filter((info) => info.id.startsWith(target));
  if (matches.length === 0) throw new CliError(`${absolute}: no such file, and no session id in ${store.name} starts with "${target}"`);
  if (matches.length > 1) {
    throw new CliError(
      `session id prefix "${target}" is ambiguous: ${matches.length} sessions in ${store.name} match`,
      matches.map((info) => `  ${info.id}  ${store.nameOf(info.path)}  ${oneLine(info.name ?? info.firstMessage, 40)}`),
    );
  }
  return storeRef(store, storage, matches[0]!.path);
}

/** A session of the store: a file under the root is resolved as a file argument (as before). */
async function storeRef(store: CliStore, storage: ClosableStorage, path: string, missing?: string): Promise<SessionFileRef> {
  if (store.kind === "dir") return resolveSessionFile(store.nameOf(path), store.root, "/");
  const stat = await storage.stat(path).catch((error: unknown) => {
    if (isStorageError(error, "invalid")) return null;
    throw error;
  });
  if (!stat) throw new CliError(missing ?? `${store.nameOf(path)}: no such file in ${store.name}`);
  if (stat.size === 0) throw new CliError(`${store.nameOf(path)} in ${store.name} is empty, not a session file`);
  return { absolute: store.nameOf(path), storage, path, nameOf: store.nameOf, location: store.name, onDisk: false, inStore: true, inRoot: true };
}

/** Bytes read to find a header: pi's headers are a few hundred bytes. */
const HEADER_PROBE_BYTES = 64 * 1024;

/** The session id in the header (first line) of a stored file, or null when it has none. */
async function headerId(storage: StoragePort, path: string): Promise<string | null> {
  const head = await storage.read(path, { offset: 0, length: HEADER_PROBE_BYTES });
  if (!head) return null;
  const newline = head.indexOf(0x0a);
  try {
    const header = JSON.parse(new TextDecoder().decode(newline < 0 ? head : head.subarray(0, newline))) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string" ? header.id : null;
  } catch {
    return null;
  }
}

/**
 * The session files of an export as one read-only storage, wherever each file is. A session of
 * the root keeps its storage path; any other file is named by its absolute path (a storage path of
 * another store would read as one of the root's). A blob comes from the first of their stores
 * that holds it: blobs are named by their hash, and the export checks it.
 */
export interface ExportView {
  storage: StoragePort;
  /** The path of each ref in `storage`, in order. */
  paths: string[];
  /** The file a path of `storage` was read from (a session, or a blob found in one of the stores). */
  fileOf(path: string): string | undefined;
}

export function exportView(refs: readonly SessionFileRef[]): ExportView {
  const sessions = new Map<string, SessionFileRef>();
  const paths = refs.map((ref) => {
    const path = ref.inRoot ? ref.path : ref.nameOf(ref.path);
    sessions.set(path, ref);
    return path;
  });
  const stores = [...new Map(refs.map((ref) => [ref.location, ref])).values()];
  /** Blob paths -> the file they were found in. */
  const found = new Map<string, string>();
  async function first<T>(path: string, get: (store: StoragePort) => Promise<T | null>): Promise<T | null> {
    for (const store of stores) {
      const result = await get(store.storage);
      if (result === null) continue;
      found.set(path, store.nameOf(path));
      return result;
    }
    return null;
  }
  const readOnly = (operation: string) => async (): Promise<never> => {
    throw new StorageError("unsupported", `${operation}: the files of an export are only read`);
  };
  const storage: StoragePort = {
    kind: "cli-export-view",
    async read(path, range) {
      const session = sessions.get(path);
      return session ? session.storage.read(session.path, range) : first(path, (store) => store.read(path, range));
    },
    async stat(path) {
      const session = sessions.get(path);
      return session ? session.storage.stat(session.path) : first(path, (store) => store.stat(path));
    },
    list: readOnly("list"),
    append: readOnly("append"),
    write: readOnly("write"),
    truncate: readOnly("truncate"),
    remove: readOnly("remove"),
  };
  return { storage, paths, fileOf: (path) => sessions.get(path)?.absolute ?? found.get(path) };
}
