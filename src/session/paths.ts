/** Where pi keeps sessions, as storage paths below the agent dir (~/.pi/agent). */
import { joinPath } from "../port.js";

export const SESSIONS_DIR = "sessions";

/** pi's session directory for a cwd: lossy, "/", "\" and ":" become "-". */
export function sessionDirFor(cwd: string): string {
  return joinPath(SESSIONS_DIR, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

/** `<ISO timestamp with : and . as ->_<sessionId>.jsonl` */
export function sessionFileName(timestamp: string, sessionId: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}
