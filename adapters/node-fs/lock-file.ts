/**
 * Locks shared with other processes: a lock is a file created with O_EXCL that names its owner
 * (pid, host; on Linux the process's start time and boot id), so a dead owner's lock is taken
 * over. How an owner is judged dead: docs/DESIGN.md, "node-fs".
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, lstat, open, readFile } from "node:fs/promises";
import os from "node:os";
import nodePath from "node:path";
import { checkStoragePath, StorageError, type StorageLock } from "../../src/port.js";
import { errorCode, toStorageError, unlinkIfPresent } from "./errors.js";
import { linkRefused, openNoFollow, type StorageRoot } from "./paths.js";

/** An unreadable lock file younger than this may be one whose owner is still writing it. */
const UNREADABLE_LOCK_GRACE_MS = 10_000;

/** What a lock file holds, as JSON. */
interface LockOwner {
  pid: number;
  hostname: string;
  acquiredAt: string;
  /** Linux: the owner's start time, field 22 of /proc/<pid>/stat (clock ticks since boot). */
  startTime?: number;
  /** Linux: /proc/sys/kernel/random/boot_id when the lock was taken; start times count from that boot. */
  bootId?: string;
}

/**
 * Takes the lock named `key` by creating its lock file `<key>.lock` (and its directory); a lock
 * whose owner is dead is taken over. Fails at once with StorageError "locked" when another owner
 * holds it, "forbidden" when the lock file or a directory on its way is a link.
 */
export async function acquireLockFile(paths: StorageRoot, key: string): Promise<StorageLock> {
  try {
    checkStoragePath(key);
    const { file } = await paths.fileToCreate(`${key}.lock`, "lock", key);
    return await tryAcquire(key, file, true);
  } catch (error) {
    throw await paths.failure(error, "lock", key, `${key}.lock`);
  }
}

/** `mayTakeOver`: whether a stale lock file (or one that vanished meanwhile) may be replaced; the retry may not, so it ends. */
async function tryAcquire(key: string, lockFile: string, mayTakeOver: boolean): Promise<StorageLock> {
  const identity = await processIdentity(process.pid);
  const owner: LockOwner = { pid: process.pid, hostname: os.hostname(), acquiredAt: new Date().toISOString(), ...identity };
  try {
    await createExclusive(lockFile, JSON.stringify(owner));
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
    const found = await lockOwner(key, lockFile);
    if (found === "gone") {
      if (mayTakeOver) return tryAcquire(key, lockFile, false);
      throw new StorageError("locked", `${key} is locked (its lock file changed while it was being acquired)`, {
        path: key,
        cause: error,
      });
    }
    const stale =
      found.owner === null ? Date.now() - found.mtimeMs > UNREADABLE_LOCK_GRACE_MS : found.owner.hostname === os.hostname() && (await ownerIsGone(found.owner));
    if (stale && mayTakeOver) {
      await unlinkIfPresent(lockFile);
      return tryAcquire(key, lockFile, false);
    }
    const by = found.owner ? `by pid ${found.owner.pid} on host ${found.owner.hostname}` : "by an unreadable lock file";
    throw new StorageError("locked", `${key} is locked ${by}`, { path: key, cause: error });
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await unlinkIfPresent(lockFile);
      } catch (error) {
        throw toStorageError(error, "release lock", key);
      }
    },
  };
}

/** The owner a lock file names (null when it cannot be read as one) and its age; "gone" when it was removed. */
async function lockOwner(key: string, lockFile: string): Promise<{ owner: LockOwner | null; mtimeMs: number } | "gone"> {
  let text: string;
  let mtimeMs: number;
  try {
    const info = await lstat(lockFile);
    // O_EXCL did not follow it; reading it would.
    if (info.isSymbolicLink()) throw linkRefused("lock", key);
    mtimeMs = info.mtimeMs;
    text = await readText(lockFile, key);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return "gone";
    throw error;
  }
  return { owner: parseLockOwner(text), mtimeMs };
}

/**
 * Creates `file` holding `text`, failing with EEXIST when it exists. The text is written to a temp
 * file first and hard-linked into place, so a process killed mid-way never leaves an empty lock
 * file, which others would have to wait out as unreadable. Where hard links are not supported, the
 * file is created with O_EXCL and then written.
 */
async function createExclusive(file: string, text: string): Promise<void> {
  const temp = nodePath.join(nodePath.dirname(file), `.${nodePath.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  await writeNew(temp, text);
  try {
    await link(temp, file);
  } catch (error) {
    if (!LINKS_UNSUPPORTED.has(errorCode(error) ?? "")) throw error;
    await writeNew(file, text);
  } finally {
    await unlinkIfPresent(temp);
  }
}

/** What link() fails with on a file system without hard links. */
const LINKS_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

async function writeNew(file: string, text: string): Promise<void> {
  const handle = await open(file, "wx");
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

async function readText(file: string, key: string): Promise<string> {
  const handle = await openNoFollow(file, constants.O_RDONLY, "lock", key);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

function parseLockOwner(text: string): LockOwner | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return null;
    const { pid, hostname, acquiredAt, startTime, bootId } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof hostname !== "string") return null;
    return {
      pid: pid as number,
      hostname,
      acquiredAt: typeof acquiredAt === "string" ? acquiredAt : "",
      ...(Number.isSafeInteger(startTime) ? { startTime: startTime as number } : {}),
      ...(typeof bootId === "string" ? { bootId } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Whether the owner of a lock taken on this host is dead: its pid is gone, the host booted since,
 * or the pid now names a process that started at another time (a reused pid). Lock files without
 * a start time (older ones, other platforms) are judged by the pid alone.
 */
async function ownerIsGone(owner: LockOwner): Promise<boolean> {
  if (!isProcessAlive(owner.pid)) return true;
  if (owner.startTime === undefined || owner.bootId === undefined) return false;
  const now = await processIdentity(owner.pid);
  if (now.bootId === undefined) return false;
  if (now.bootId !== owner.bootId) return true;
  // The pid's process may have exited between the two looks: no start time then, and it is gone.
  return now.startTime !== owner.startTime;
}

/** Linux: a process's start time and the boot it counts from; nothing elsewhere (or when unreadable). */
async function processIdentity(pid: number): Promise<{ startTime?: number; bootId?: string }> {
  let bootId: string;
  try {
    bootId = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
  } catch {
    return {};
  }
  try {
    const startTime = parseStartTime(await readFile(`/proc/${pid}/stat`, "utf8"));
    return startTime === undefined ? { bootId } : { startTime, bootId };
  } catch {
    return { bootId };
  }
}

/**
 * Field 22 (starttime) of a /proc/<pid>/stat line. Field 2 is the command name in parentheses and
 * may itself hold spaces and parentheses, so fields are counted from the last ")".
 */
function parseStartTime(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const value = Number(fields[22 - 3]);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) !== "ESRCH";
  }
}
