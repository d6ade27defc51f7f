/** `ls`: the sessions of a project dir, or of all, over the stores read. */
import nodePath from "node:path";
import { listAllSessions, listCwdSessions } from "../src/session/listing.js";
import type { SessionInfo } from "../src/format/types.js";
import { AGENTS, type AgentName } from "./command.js";
import { agentHomes } from "./agent-stores.js";
import type { LsArgs } from "./commands/ls.js";
import { listingProgress } from "./progress.js";
import { renderSessionTable } from "./render.js";
import type { Run } from "./run.js";
import { storeFileOf, storeStorage } from "./store.js";

/** A listed session: pi's SessionInfo with an absolute `path`, and the agent and store it belongs to. */
type ListedSession = SessionInfo & { agent: AgentName; store: string };

export async function lsCommand(run: Run<LsArgs>): Promise<number> {
  const stores = await run.stores();
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  const listed: ListedSession[] = [];
  for (const store of stores) {
    // Read through the cache: the catalog is written there, never into the agent's folder.
    const storage = await storeStorage(store, run.io.env, run.home);
    const progress = listingProgress(run.io.stderr, stores.length > 1 ? `sessionkit: ls: ${store.label}` : "sessionkit: ls");
    try {
      const options = { onProgress: progress.onProgress, withText: run.args.withText };
      const infos = run.args.all ? await listAllSessions(storage, options) : await listCwdSessions(storage, cwd, { ...options, layout: store.layout });
      for (const info of infos) listed.push({ ...info, path: storeFileOf(store, info.path), agent: store.agent, store: store.root });
    } finally {
      progress.done();
      await storage.close();
    }
  }
  // Most recently modified first over all stores; the path breaks ties, as the library's listing does.
  listed.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  run.print(listed, () => {
    if (listed.length > 0) return [...renderSessionTable(listed), `${listed.length} session${listed.length === 1 ? "" : "s"}`];
    if (stores.length === 0) return [`no sessions: no agent store found (looked for ${AGENTS.map((agent) => agentHomes(agent, run.io.env, run.home)).join(", ")})`];
    return [`no sessions${run.args.all ? "" : ` for ${cwd}`} in ${stores.map((store) => store.root).join(", ")}`];
  });
  return 0;
}
