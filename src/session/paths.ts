/** Where agents keep sessions, as storage paths below the store's root (~/.pi/agent for pi). */
import type { SessionDialect } from "../format/dialect.js";
import { joinPath } from "../port.js";

export const SESSIONS_DIR = "sessions";

/**
 * How a store lays out its sessions and writes new ones:
 * - "pi": `sessions/--<cwd>--/<ISO timestamp>_<id>.jsonl` in pi's dialect; a session is named by a
 *   `session_info` entry (pi, indusagi).
 * - "omp": pi's folders and dialect; a session is named by its header's `title`, rewritten in place
 *   (oh-my-pi, xcsh).
 * - "seed003": every session in one flat `sessions/` folder as `<timestamp with µs>_<id>.jsonl`, in
 *   seed 003's dialect; a project's sessions are those whose header cwd is the project's.
 * Files already stored are read in whatever dialect they declare, whatever the store's layout.
 * @category Sessions
 */
export type StoreLayout = "pi" | "omp" | "seed003";

const STORE_LAYOUTS: readonly StoreLayout[] = ["pi", "omp", "seed003"];

/** The dialect a store writes new session files in. */
export function layoutDialect(layout: StoreLayout): SessionDialect {
  return layout === "seed003" ? "seed003" : "pi";
}

/** pi's session directory for a cwd: lossy, "/", "\" and ":" become "-". */
export function sessionDirFor(cwd: string): string {
  return joinPath(SESSIONS_DIR, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

/** `<ISO timestamp with : and . as ->_<sessionId>.jsonl` */
export function sessionFileName(timestamp: string, sessionId: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

/** The directory a store of `layout` puts a new session of `cwd` in. */
export function storeSessionDir(layout: StoreLayout, cwd: string): string {
  return layout === "seed003" ? SESSIONS_DIR : sessionDirFor(cwd);
}

/** The file name a store of `layout` gives a session created at `timestamp` (ISO). */
export function storeSessionFileName(layout: StoreLayout, timestamp: string, sessionId: string): string {
  return layout === "seed003" ? seed003FileName(timestamp, sessionId) : sessionFileName(timestamp, sessionId);
}

/**
 * seed 003's `2024-01-15T10-30-00-000000_<uuid>.jsonl`: the UTC time to the microsecond (ours are
 * whole milliseconds). A timestamp Date cannot read is used as pi would use it.
 */
export function seed003FileName(timestamp: string, sessionId: string): string {
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return sessionFileName(timestamp, sessionId);
  const iso = new Date(time).toISOString(); // 2024-01-15T10:30:00.123Z
  return `${iso.slice(0, 19).replace(/:/g, "-")}-${iso.slice(20, 23)}000_${sessionId}.jsonl`;
}

/**
 * The same directory, written two ways ("/work/app/" and "/work/app"): a cwd compared as oh-my-pi
 * compares resolved paths, without a file system (trailing separators dropped).
 */
export function sameCwd(a: string, b: string): boolean {
  return cwdKey(a) === cwdKey(b);
}

/** A cwd as sameCwd compares it (trailing separators dropped): equal keys, the same directory. */
export function cwdKey(path: string): string {
  return path.length > 1 ? path.replace(/[/\\]+$/, "") || path.slice(0, 1) : path;
}
