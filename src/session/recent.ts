/**
 * oh-my-pi's `getRecentSessions`: the newest sessions of a folder for a session picker, each from
 * a 4 KiB prefix of its file, with a display name and a relative time.
 */
import { detectDialect } from "../format/dialect.js";
import { decodeHeader } from "../format/session-file.js";
import { baseName, joinPath, type StoragePort } from "../port.js";
import { sameCwd } from "./paths.js";

/**
 * One session of {@link getRecentSessions}, ready for a session picker.
 * @category Listing
 */
export interface RecentSessionInfo {
  /** Storage path of the session file. */
  path: string;
  /** The file's modification time, in milliseconds since the epoch. */
  mtime: number;
  /** The first non-empty of: the header's title, the first user prompt, the session id, the file name without `.jsonl`. */
  fullName: string;
  /** `fullName`, cut to 40 characters (39 and "…"). */
  name: string;
  /** "just now", "5m ago", "3h ago", "2d ago", else the local date. */
  timeAgo: string;
}

const PREFIX_BYTES = 4096;
const NAME_CHARS = 40;

/**
 * Options of {@link getRecentSessions}.
 * @category Listing
 */
export interface RecentSessionsOptions {
  /** Only sessions whose header cwd is this one (a flat seed-003 store holds every project's). */
  cwd?: string;
  /** The time `timeAgo` counts from (ms); now by default. */
  now?: number;
}

/**
 * The `limit` most recently modified sessions (by file mtime) of `sessionDir`, newest first. Files
 * whose first line is not a session header are left out; a storage failure gives [].
 * @category Listing
 */
export async function getRecentSessions(storage: StoragePort, sessionDir: string, limit = 3, options: RecentSessionsOptions = {}): Promise<RecentSessionInfo[]> {
  const now = options.now ?? Date.now();
  try {
    const files = (await storage.list(sessionDir)).filter((e) => e.kind === "file" && e.name.endsWith(".jsonl"));
    const found: RecentSessionInfo[] = [];
    for (const file of files) {
      const path = joinPath(sessionDir, file.name);
      const info = await recentSessionInfo(storage, path, file.mtimeMs, now, options.cwd);
      if (info) found.push(info);
    }
    return found.sort((a, b) => b.mtime - a.mtime).slice(0, Math.max(0, limit));
  } catch {
    return [];
  }
}

async function recentSessionInfo(storage: StoragePort, path: string, mtime: number, now: number, cwd: string | undefined): Promise<RecentSessionInfo | null> {
  const prefix = await storage.read(path, { offset: 0, length: PREFIX_BYTES });
  if (!prefix) return null;
  const lines = new TextDecoder().decode(prefix).split("\n");
  if (prefix.length === PREFIX_BYTES) lines.pop(); // the prefix may cut its last line
  let header;
  try {
    const first = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
    const dialect = detectDialect(first);
    header = dialect === null ? null : decodeHeader(dialect, first);
  } catch {
    return null;
  }
  if (!header?.success) return null;
  if (cwd !== undefined && !sameCwd(typeof header.data.cwd === "string" ? header.data.cwd : "", cwd)) return null;
  const title = typeof header.data.title === "string" ? header.data.title : undefined;
  const fullName =
    sanitizeName(title) ?? sanitizeName(title ? undefined : firstUserPrompt(lines)) ?? sanitizeName(header.data.id) ?? baseName(path).replace(/\.jsonl$/, "");
  return { path, mtime, fullName, name: fullName.length <= NAME_CHARS ? fullName : `${fullName.slice(0, NAME_CHARS - 1)}…`, timeAgo: formatTimeAgo(mtime, now) };
}

/** The first line, control characters removed, trimmed; undefined when nothing is left. */
function sanitizeName(value: string | undefined): string | undefined {
  if (!value) return undefined;
  // eslint-disable-next-line no-control-regex
  const text = (value.split(/\r?\n/)[0] ?? "").replace(/[\x00-\x1f\x7f]/g, "").trim();
  return text || undefined;
}

/** The first user message's text among the lines after the header: string content, or its first block with text. */
function firstUserPrompt(lines: readonly string[]): string | undefined {
  for (const line of lines.slice(1)) {
    if (!line.trim()) continue;
    let entry: { type?: unknown; message?: { role?: unknown; content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.type !== "message" || entry.message?.role !== "user") continue;
    const content = entry.message.content;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      for (const block of content) if (typeof block?.text === "string") return block.text;
    }
  }
  return undefined;
}

/** oh-my-pi's relative time of `time` as seen at `now` (both ms). */
export function formatTimeAgo(time: number, now: number): string {
  const ms = now - time;
  const minutes = Math.floor(ms / 60_000);
  const hours = Math.floor(ms / 3_600_000);
  const days = Math.floor(ms / 86_400_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes}m ago`;
  if (hours < 24) return `${hours}h ago`;
  if (days < 7) return `${days}d ago`;
  return new Date(time).toLocaleDateString();
}
