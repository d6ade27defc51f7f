/**
 * A session argument: a file (read through the store it lies in, so its blob refs resolve), or a
 * session id or id prefix of the stores read; opened without writing anything. And the files of an
 * export as one storage.
 */
import { realpath } from "node:fs/promises";
import nodePath from "node:path";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { decodeHeader } from "../src/format/session-file.js";
import { detectDialect } from "../src/format/dialect.js";
import { primeLineProof } from "../src/format/message-line.js";
import { findSessionPaths } from "../src/archive/store-index.js";
import { isStorageError, StorageError, type StoragePort } from "../src/port.js";
import { SESSIONS_DIR } from "../src/session/paths.js";
import { SessionManager } from "../src/session/session-manager.js";
import type { SessionInfo } from "../src/format/types.js";
import type { AgentStore } from "./agent-stores.js";
import type { ClosableStorage } from "./database-store.js";
import { CliError, failureKind } from "./errors.js";
import { listingProgress, type ProgressSink } from "./progress.js";
import { oneLine } from "./render.js";
import { loadTextWidth } from "./text-width.js";
import { statOrNull, storeFileOf, storeStorage } from "./store.js";
import { openStorePort, StoreDirectory } from "./store-port.js";

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
  /** True when `storage` is the root of the one store read (--root): its sessions keep their storage paths in an export. */
  inRoot: boolean;
  /** The agent store the file is in, when it is in one of the stores read. */
  store?: AgentStore;
}

const HEAD_BYTES = 4096;

/**
 * Finds the storage for a file argument (absolute, or relative to `cwd`). A file under one of
 * `stores` is read through that store's root, so its blob refs resolve against the store's blobs/.
 * A file laid out as an agent lays it out elsewhere (<agent dir>/sessions/<project>/<file>, or
 * seed 003's <profile>/sessions/<file>) is read through that agent dir, for the same reason. Any
 * other file is read through its own directory.
 */
async function resolveSessionFile(arg: string, stores: readonly AgentStore[], cwd: string): Promise<SessionFileRef> {
  const absolute = nodePath.resolve(cwd, arg);
  const info = await statOrNull(absolute);
  if (!info) throw new CliError("not-found", `${absolute}: no such file`);
  if (!info.isFile()) throw new CliError("invalid", `${absolute} is not a file`);
  if (info.size === 0) throw new CliError("invalid", `${absolute} is empty, not a session file`);

  const real = await realpath(absolute);
  // The stores read, then the agent dir the file is laid out in, by the path as given (its
  // sessions/ may be a link) and as resolved.
  const candidates: Array<{ root: string; store?: AgentStore }> = [...stores.filter((store) => !store.database).map((store) => ({ root: store.root, store })), ...agentDirOf(absolute), ...agentDirOf(real)];
  for (const { root, store } of candidates) {
    // A store whose folders cannot be resolved (a dangling link) holds no file.
    const directory = await StoreDirectory.find(root).catch(() => null);
    const path = directory?.pathOf(real);
    if (!directory || path == null) continue;
    const nameOf = (p: string) => directory.fileOf(p);
    return checkedFile({ absolute, storage: directory.open(), path, nameOf, location: directory.fileOf(""), onDisk: true, inStore: true, inRoot: store !== undefined && stores.length === 1, ...(store ? { store } : {}) }, info.size);
  }
  const storageRoot = nodePath.dirname(real);
  const nameOf = (p: string) => nodePath.join(storageRoot, ...p.split("/"));
  return checkedFile({ absolute, storage: nodeFsStorage({ root: storageRoot }), path: nodePath.basename(real), nameOf, location: storageRoot, onDisk: true, inStore: false, inRoot: false }, info.size);
}

/** The agent dir of a file laid out as agents lay out sessions: `<dir>/sessions/<project>/<file>`, or seed 003's `<dir>/sessions/<file>`. */
function agentDirOf(file: string): Array<{ root: string }> {
  const project = nodePath.dirname(file);
  if (nodePath.basename(nodePath.dirname(project)) === SESSIONS_DIR) return [{ root: nodePath.dirname(nodePath.dirname(project)) }];
  if (nodePath.basename(project) === SESSIONS_DIR) return [{ root: nodePath.dirname(project) }];
  return [];
}

/** `ref`, once a small file is seen to hold more than whitespace. */
async function checkedFile(ref: SessionFileRef, size: number): Promise<SessionFileRef> {
  if (size <= HEAD_BYTES) {
    const bytes = await ref.storage.read(ref.path);
    if (bytes && new TextDecoder().decode(bytes).trim() === "") throw new CliError("invalid", `${ref.absolute} holds only whitespace, not a session file`);
  }
  return ref;
}

/**
 * Opens a file argument without writing anything: migrations happen in memory, no lock file is
 * made, nothing is repaired. Warnings (skipped lines, missing blobs) go to `onWarning` with the
 * absolute path in place of the storage path.
 */
export async function openReadOnly(ref: SessionFileRef, onWarning: (message: string) => void): Promise<SessionManager> {
  primeLineProof(); // a command proves one session's lines in a fresh process
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
function withAbsolutePath(message: string, ref: SessionFileRef): string {
  const escaped = ref.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Only the path as a whole word: a short file name may also occur inside other words.
  const pattern = new RegExp(`(^|[\\s"'(])${escaped}(?=$|[\\s"':),])`);
  if (pattern.test(message)) return message.replace(pattern, (_match, before: string) => before + ref.absolute);
  return `${ref.absolute}: ${message}`;
}

/** A library error about `ref` as a CliError naming the file. */
export function asCliError(error: unknown, ref: SessionFileRef): unknown {
  if (error instanceof CliError || !(error instanceof Error)) return error;
  return new CliError(failureKind(error), withAbsolutePath(error.message, ref));
}

/** Where a session id is looked up (env and home locate the cache the listing catalog lives in). */
export interface LookupContext {
  stores: readonly AgentStore[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  progressSink: ProgressSink;
  /** The progress line's label ("sessionkit: show"). */
  label: string;
}

/**
 * A file argument, else a session id looked up among the sessions of every store: the file named
 * for that exact id (pi and seed 003 name them <timestamp>_<id>.jsonl; its header must agree),
 * else the one session whose id starts with it (every session file is read through the listing
 * catalog, kept in the cache: progress on `progressSink`).
 */
export async function resolveSessionArgument(target: string, context: LookupContext): Promise<SessionFileRef> {
  const { stores, cwd } = context;
  const absolute = nodePath.resolve(cwd, target);
  // Ids are UUIDs: an argument with a separator or a dot ("x.jsonl") can only be a file, or (with
  // --store) a path in the database.
  const local = await statOrNull(absolute);
  const pathLike = /[/.]/.test(target) || target.includes(nodePath.sep);
  const database = stores.find((store) => store.database);
  if (!local && pathLike && database) return databaseRef(database, target, `${absolute}: no such file, and no ${target} in ${database.root}`);
  if (local || pathLike) return resolveSessionFile(target, stores, cwd);
  if (stores.length === 0) throw new CliError("not-found", `${absolute}: no such file (and no agent store to look up session ids in)`);
  const where = stores.map((store) => store.root).join(", ");
  const fileOf = storeFileOf;
  const refOf = (store: AgentStore, path: string) => (store.database ? databaseRef(store, path) : resolveSessionFile(fileOf(store, path), stores, cwd));

  const named: { store: AgentStore; path: string }[] = [];
  for (const store of stores) {
    const storage = store.database ? await store.database.open() : await openStorePort(store.root);
    try {
      for (const path of await findSessionPaths(storage, target)) if ((await headerId(storage, path)) === target) named.push({ store, path });
    } finally {
      await storage.close();
    }
  }
  if (named.length > 1) throw new CliError("usage", `session id "${target}" names ${named.length} files in ${where}`, named.map(({ store, path }) => `  ${fileOf(store, path)}`));
  if (named.length === 1) return refOf(named[0]!.store, named[0]!.path);

  const infos: Array<SessionInfo & { file: string; store: AgentStore }> = [];
  for (const store of stores) {
    const storage = await storeStorage(store, context.env, context.home);
    const progress = listingProgress(context.progressSink, stores.length > 1 ? `${context.label}: ${store.label}` : context.label);
    try {
      for (const info of await SessionManager.listAll(storage, { onProgress: progress.onProgress })) infos.push({ ...info, file: fileOf(store, info.path), store });
    } finally {
      progress.done();
      await storage.close();
    }
  }
  const exact = infos.filter((info) => info.id === target);
  const matches = exact.length > 0 ? exact : infos.filter((info) => info.id.startsWith(target));
  if (matches.length === 0) throw new CliError("not-found", `${absolute}: no such file, and no session id in ${where} starts with "${target}"`);
  if (matches.length > 1) {
    await loadTextWidth(); // for the names cut to 40 columns, with or without --json
    throw new CliError(
      "usage",
      `session id prefix "${target}" is ambiguous: ${matches.length} sessions in ${where} match`,
      matches.map((info) => `  ${info.id}  ${stores.length > 1 ? `${info.store.agent}  ` : ""}${info.file}  ${oneLine(info.name ?? info.title ?? info.firstMessage, 40)}`),
    );
  }
  return refOf(matches[0]!.store, matches[0]!.path);
}

/** A session of a database store. */
async function databaseRef(store: AgentStore, path: string, missing?: string): Promise<SessionFileRef> {
  const storage = await store.database!.open();
  const stat = await storage.stat(path).catch((error: unknown) => {
    if (isStorageError(error, "invalid")) return null;
    throw error;
  });
  if (!stat) throw new CliError("not-found", missing ?? `${path}: no such file in ${store.root}`);
  if (stat.size === 0) throw new CliError("invalid", `${path} in ${store.root} is empty, not a session file`);
  const nameOf = (p: string) => storeFileOf(store, p);
  return { absolute: path, storage, path, nameOf, location: store.root, onDisk: false, inStore: true, inRoot: true, store };
}

/** Bytes read to find a header: pi's headers are a few hundred bytes. */
const HEADER_PROBE_BYTES = 64 * 1024;

/** The session id in the header (first line, of any dialect) of a stored file, or null when it has none. */
async function headerId(storage: StoragePort, path: string): Promise<string | null> {
  const head = await storage.read(path, { offset: 0, length: HEADER_PROBE_BYTES });
  if (!head) return null;
  const newline = head.indexOf(0x0a);
  try {
    const record = JSON.parse(new TextDecoder().decode(newline < 0 ? head : head.subarray(0, newline))) as Record<string, unknown>;
    const dialect = detectDialect(record);
    const header = dialect === null ? null : decodeHeader(dialect, record);
    return header?.success ? header.data.id : null;
  } catch {
    return null;
  }
}

/**
 * The session files of an export as one read-only storage, wherever each file is. A session of
 * the root keeps its storage path; any other file is named by its absolute path (a storage path of
 * another store would read as one of the root's), and by a relative one below `outside-root/` for
 * a SessionManager to open. A blob comes from the first of their stores
 * that holds it: blobs are named by their hash, and the export checks it.
 */
export interface ExportView {
  storage: StoragePort;
  /** The path of each ref in `storage`, in order. */
  paths: string[];
  /** The relative path of each ref in `storage` (a SessionManager opens only those), in order. */
  relativePaths: string[];
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
  // SessionManager takes relative storage paths only: a file outside the root also answers to one
  // that no root path can be.
  const relativePaths = refs.map((ref, index) => {
    if (ref.inRoot) return ref.path;
    const alias = `outside-root/${index}/${nodePath.basename(ref.absolute)}`;
    sessions.set(alias, ref);
    return alias;
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
  return { storage, paths, relativePaths, fileOf: (path) => sessions.get(path)?.absolute ?? found.get(path) };
}
