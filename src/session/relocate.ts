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

/** `bytes` with their first line replaced by `line` (which ends in "\n"), and how much longer that made them. */
export function replaceFirstLine(bytes: Uint8Array, line: Uint8Array): { bytes: Uint8Array; delta: number } {
  const newline = bytes.indexOf(0x0a);
  const rest = newline < 0 ? new Uint8Array() : bytes.subarray(newline + 1);
  const out = new Uint8Array(line.length + rest.length);
  out.set(line);
  out.set(rest, line.length);
  return { bytes: out, delta: line.length - (newline < 0 ? bytes.length : newline + 1) };
}

/**
 * Moves `oldFile` to `newFile` and the side folder along with it. `rewrite` makes the new file's
 * bytes from the old ones (null when the old file is gone); without it (a session not written yet)
 * only the side folder moves. Returns what `rewrite` returned.
 */
export async function relocateSession<T extends { bytes: Uint8Array }>(
  storage: StoragePort,
  oldFile: string,
  newFile: string,
  rewrite: ((original: Uint8Array | null) => Promise<T>) | null,
): Promise<T | null> {
  const moves: Move[] = [];
  let rewritten: T | null = null;
  let newSessionFile: Uint8Array | null = null;
  if (rewrite) {
    const original = await storage.read(oldFile);
    rewritten = await rewrite(original);
    if (original) moves.push({ from: oldFile, to: newFile, bytes: rewritten.bytes, original });
    else newSessionFile = rewritten.bytes; // gone from storage: written anew from what the caller holds
  }
  const oldSide = sideFolderOf(oldFile);
  const newSide = sideFolderOf(newFile);
  for (const relative of await filesBelow(storage, oldSide)) {
    const original = await storage.read(joinPath(oldSide, relative));
    if (original) moves.push({ from: joinPath(oldSide, relative), to: joinPath(newSide, relative), bytes: original, original });
  }
  const targets = [...moves.map((move) => move.to), ...(newSessionFile ? [newFile] : [])];
  for (const target of targets) {
    if ((await storage.stat(target)) !== null) throw new SessionError("rewrite-failed", `${target} exists: not replacing it`, { path: target });
  }

  const written: string[] = [];
  const removed: Move[] = [];
  try {
    if (newSessionFile) {
      written.push(newFile);
      await storage.write(newFile, newSessionFile);
    }
    for (const move of moves) {
      written.push(move.to);
      await storage.write(move.to, move.bytes);
    }
    for (const target of targets) await storage.sync?.(target);
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
  return rewritten;
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
