/**
 * Moving a session's files to another folder, all or nothing: the session file (its header line
 * replaced) and its side folder (the file's path without `.jsonl`, where tools keep artifacts).
 * The port has no rename, so every file is copied, then the originals removed; a failure undoes
 * what was done, so storage holds the old files or the new ones, never a mix.
 */
import { SessionError } from "../errors.js";
import { joinPath, type StoragePort } from "../port.js";

/** The side folder of a session file: its path without `.jsonl`. */
export function sideFolderOf(sessionFile: string): string {
  return sessionFile.endsWith(".jsonl") ? sessionFile.slice(0, -".jsonl".length) : `${sessionFile}.d`;
}

interface Move {
  from: string;
  to: string;
  bytes: Uint8Array;
  original: Uint8Array;
}

/**
 * Moves `oldFile` to `newFile` with its first line replaced by `headerLine` (null: the session file
 * is not written yet, only its side folder moves) and the side folder along with it. Returns how
 * many bytes the header line grew by.
 */
export async function relocateSession(storage: StoragePort, oldFile: string, newFile: string, headerLine: Uint8Array | null): Promise<number> {
  const moves: Move[] = [];
  let delta = 0;
  if (headerLine) {
    const original = await storage.read(oldFile);
    if (!original) throw new SessionError("rewrite-failed", `${oldFile} vanished`, { path: oldFile });
    const newline = original.indexOf(0x0a);
    const rest = newline < 0 ? new Uint8Array() : original.subarray(newline + 1);
    const bytes = new Uint8Array(headerLine.length + rest.length);
    bytes.set(headerLine);
    bytes.set(rest, headerLine.length);
    delta = headerLine.length - (newline < 0 ? original.length : newline + 1);
    moves.push({ from: oldFile, to: newFile, bytes, original });
  }
  const oldSide = sideFolderOf(oldFile);
  const newSide = sideFolderOf(newFile);
  for (const relative of await filesBelow(storage, oldSide)) {
    const original = await storage.read(joinPath(oldSide, relative));
    if (original) moves.push({ from: joinPath(oldSide, relative), to: joinPath(newSide, relative), bytes: original, original });
  }
  for (const move of moves) {
    if ((await storage.stat(move.to)) !== null) throw new SessionError("rewrite-failed", `${move.to} exists: not replacing it`, { path: move.to });
  }

  const written: string[] = [];
  const removed: Move[] = [];
  try {
    for (const move of moves) {
      written.push(move.to);
      await storage.write(move.to, move.bytes);
    }
    for (const move of moves) await storage.sync?.(move.to);
    // The session file goes last: until then the old session is whole where it was.
    for (const move of moves.slice().reverse()) {
      await storage.remove(move.from);
      removed.push(move);
    }
  } catch (error) {
    const failed: string[] = [];
    for (const move of removed.reverse()) await storage.write(move.from, move.original).catch(() => failed.push(move.from));
    for (const path of written.reverse()) await storage.remove(path).catch(() => failed.push(path));
    if (failed.length > 0) {
      const cause = error as Error;
      throw new SessionError("rewrite-failed", `moving ${oldFile} failed (${cause?.message ?? String(error)}) and undoing it failed for ${failed.join(", ")}`, { path: oldFile, cause });
    }
    throw error;
  }
  return delta;
}

/** Paths of the files below `dir`, relative to it, at any depth. */
async function filesBelow(storage: StoragePort, dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await storage.list(joinPath(dir, relative))) {
      const path = joinPath(relative, entry.name);
      if (entry.kind === "dir") await walk(path);
      else out.push(path);
    }
  };
  await walk("");
  return out.sort();
}
