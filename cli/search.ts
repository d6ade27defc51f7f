/** The search and history commands. */
import nodePath from "node:path";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { PromptHistory, searchSessions, sessionDirFor, type HistoryEntry, type SearchHit } from "../src/index.js";
import type { Run } from "./commands.js";
import { searchProgress } from "./progress.js";
import { oneLine } from "./render.js";
import { requireDirectory } from "./store.js";

const DEFAULT_LIMIT = 50;

export async function searchCommand(run: Run): Promise<number> {
  await requireDirectory(run.root);
  const storage = nodeFsStorage({ root: run.root });
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  // Progress is for people: a --json reader on a pipe gets none.
  const progress = searchProgress(run.io.stderr, "sessionkit: search", run.args.json && !run.io.stderr.isTTY);
  let hits: SearchHit[];
  try {
    hits = await searchSessions(storage, run.args.target, {
      ...(run.args.all ? {} : { dir: sessionDirFor(cwd) }),
      ...(run.args.sources ? { sources: run.args.sources } : {}),
      limit: run.args.limit ?? DEFAULT_LIMIT,
      onProgress: progress.onProgress,
    });
  } finally {
    progress.done();
    await storage.close();
  }
  run.print(hits, () => {
    if (hits.length === 0) return [`no messages match ${JSON.stringify(run.args.target)}${run.args.all ? "" : ` in the sessions of ${cwd}`}`];
    const lines: string[] = [];
    let session = "";
    for (const hit of hits) {
      if (hit.path !== session) {
        session = hit.path;
        lines.push(`${nodePath.join(run.root, ...hit.path.split("/"))}  (session ${hit.sessionId})`);
      }
      lines.push(`  ${(hit.entryId ?? "(v1)").padEnd(8)}  ${hit.source.padEnd(9)}  ${oneLine(hit.snippet, 160)}`);
    }
    const sessions = new Set(hits.map((hit) => hit.path)).size;
    lines.push(`${hits.length} hit${hits.length === 1 ? "" : "s"} in ${sessions} session${sessions === 1 ? "" : "s"}, best first${hits.length === (run.args.limit ?? DEFAULT_LIMIT) ? " (--limit to see more)" : ""}`);
    return lines;
  });
  return 0;
}

export async function historyCommand(run: Run): Promise<number> {
  await requireDirectory(run.root);
  const storage = nodeFsStorage({ root: run.root });
  let entries: HistoryEntry[];
  try {
    const history = await PromptHistory.open(storage);
    if (history.importError) run.warn(`${history.importError.message} (its prompts are left out)`);
    const limit = run.args.limit ?? DEFAULT_LIMIT;
    entries = run.args.target.trim() === "" ? history.recent(limit) : history.search(run.args.target, limit);
  } finally {
    await storage.close();
  }
  run.print(entries, () => {
    if (entries.length === 0) return [run.args.target.trim() === "" ? `no prompt history in ${run.root}` : `no prompt matches ${JSON.stringify(run.args.target)}`];
    return entries.map((entry) => `${new Date(entry.created_at * 1000).toISOString().slice(0, 16).replace("T", " ")}  ${oneLine(entry.prompt, 100)}${entry.cwd ? `  (${entry.cwd})` : ""}`);
  });
  return 0;
}
