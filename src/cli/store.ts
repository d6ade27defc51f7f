/**
 * Where the CLI's bytes come from: the storage root, and the storage that holds a file argument.
 */
import { realpath, stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import os from "node:os";
import nodePath from "node:path";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { SESSIONS_DIR, SessionManager } from "../index.js";
import { CliError } from "./errors.js";

/** The storage root: --root, else $PI_CODING_AGENT_DIR (as pi reads it), else ~/.pi/agent. */
export function resolveRoot(rootFlag: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  const raw = rootFlag ?? (env.PI_CODING_AGENT_DIR || "~/.pi/agent");
  const expanded = raw === "~" ? os.homedir() : raw.startsWith("~/") ? nodePath.join(os.homedir(), raw.slice(2)) : raw;
  return nodePath.resolve(cwd, expanded);
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
  /** The file as the user should read it in messages: absolute. */
  absolute: string;
  storage: NodeFsStorage;
  /** Storage path of the file in `storage`. */
  path: string;
  /** True when `storage` is a store root (sessions/ and blobs/), false when it is the file's own directory. */
  inStore: boolean;
}

const HEAD_BYTES = 4096;

/**
 * Finds the storage for a file argument (absolute, or relative to `cwd`). A file under `root`
 * is read through the root, so its blob refs resolve against the root's blobs/. A file laid out
 * as pi lays it out elsewhere (<agent dir>/sessions/<project>/<file>) is read through that agent
 * dir, for the same reason. Any other file is read through its own directory.
 */
export async function resolveSessionFile(arg: string, root: string, cwd: string): Promise<SessionFileRef> {
  const absolute = nodePath.resolve(cwd, arg);
  const info = await statOrNull(absolute);
  if (!info) throw new CliError(`${absolute}: no such file`);
  if (!info.isFile()) throw new CliError(`${absolute} is not a file`);
  if (info.size === 0) throw new CliError(`${absolute} is empty, not a session file`);

  const real = await realpath(absolute);
  const realRoot = await realpath(root).catch(() => null);
  let storageRoot = nodePath.dirname(real);
  let inStore = false;
  if (realRoot !== null && isInside(realRoot, real)) {
    storageRoot = realRoot;
    inStore = true;
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
  return { absolute, storage, path, inStore };
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
