/** Finding stored sessions by id: pi names every session file `<timestamp>_<id>.jsonl`. */
import { SESSIONS_DIR } from "../session/paths.js";
import { joinPath, type StoragePort } from "../port.js";

export interface StoredSessionIndex {
  /** Storage paths whose file name carries `id` (the header must still be checked). */
  pathsFor(id: string): string[];
}

/** Lists `sessions/*\/*.jsonl` and `sessions/*.jsonl` (a flat seed-003 store) once: names only, no file is read. */
export async function indexStoredSessions(storage: StoragePort, sessionsDir = SESSIONS_DIR): Promise<StoredSessionIndex> {
  const paths: { name: string; path: string }[] = [];
  for (const dir of await storage.list(sessionsDir)) {
    if (dir.kind === "file" && dir.name.endsWith(".jsonl")) paths.push({ name: dir.name, path: joinPath(sessionsDir, dir.name) });
    if (dir.kind !== "dir") continue;
    const dirPath = joinPath(sessionsDir, dir.name);
    for (const file of await storage.list(dirPath)) {
      if (file.kind === "file" && file.name.endsWith(".jsonl")) paths.push({ name: file.name, path: joinPath(dirPath, file.name) });
    }
  }
  paths.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    pathsFor(id) {
      const exact = `${id}.jsonl`;
      const suffix = `_${id}.jsonl`;
      return paths.filter((p) => p.name === exact || p.name.endsWith(suffix)).map((p) => p.path);
    },
  };
}

/** Storage paths of the session files named for `id` (for a CLI taking ids). */
export async function findSessionPaths(storage: StoragePort, id: string): Promise<string[]> {
  return (await indexStoredSessions(storage)).pathsFor(id);
}
