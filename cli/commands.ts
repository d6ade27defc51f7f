/** The commands. Each returns its exit code; failures throw (main prints them and exits with their kind's code). */
import { stat } from "node:fs/promises";
import os from "node:os";
import nodePath from "node:path";
import { dialectName } from "../src/format/dialect.js";
import { headerVersion } from "../src/format/migrate.js";
import { readSessionFile } from "../src/format/session-file.js";
import { SessionManager } from "../src/session/session-manager.js";
import type { SessionInfo } from "../src/format/types.js";
import { AGENTS, discoverAgentStores, storeAt, storeOwner, tildePath, type AgentName, type AgentStore } from "./agent-stores.js";
import type { ParsedCommand } from "./args.js";
import { CliError, EXIT } from "./errors.js";
import { writeJson } from "./json.js";
import { listingProgress } from "./progress.js";
import { describeEntry, renderContextSummary, renderMessages, renderSessionTable, renderTree } from "./render.js";
import { asCliError, databaseStore, openReadOnly, requireDirectory, resolveRoot, resolveSessionArgument, storeFileOf, storeStorage, type SessionFileRef } from "./store.js";
import { neutralizeControls, neutralizeJsonControls } from "./terminal-text.js";
import { lookupContext, type Io, type Run } from "./run.js";
import { renderVerifyReport, verifySession } from "./verify.js";
import { exportCommand, importCommand, isArchiveFile, verifyArchiveCommand } from "./archive.js";
import { serveCommand } from "./serve/command.js";
import { historyCommand, searchCommand } from "./search.js";
import { scanCommand } from "./scan.js";
import { syncCommand } from "./sync.js";
import { statsCommand } from "./stats.js";

type Command = (run: Run) => Promise<number>;

export async function runCommand(args: ParsedCommand, io: Io): Promise<number> {
  const home = os.homedir();
  let stores: Promise<AgentStore[]> | undefined;
  const run: Run = {
    args,
    io,
    root: resolveRoot(args.root, io.cwd, io.env),
    home,
    stores: () => (stores ??= storesToRead(args, io, home)),
    warn: (message) => io.stderr.write(`sessionkit: ${args.command}: ${neutralizeControls(message)}\n`),
    print(json, lines) {
      if (args.json) {
        if (writeJson(json, (chunk) => io.stdout(neutralizeJsonControls(chunk)))) io.stdout("\n");
        return;
      }
      // In batches: the text of a large session is too long for one string.
      let batch = "";
      for (const line of lines()) {
        batch += `${neutralizeControls(line)}\n`;
        if (batch.length >= 1 << 20) {
          io.stdout(batch);
          batch = "";
        }
      }
      io.stdout(batch);
    },
  };
  try {
    return await COMMANDS[args.command](run);
  } finally {
    // A database store's pools would keep the process alive.
    if (stores) for (const store of await stores.catch(() => [])) await store.database?.closeAll();
  }
}

/** The stores a command reads (see Run.stores). */
async function storesToRead(args: ParsedCommand, io: Io, home: string): Promise<AgentStore[]> {
  if (args.store !== undefined) return [databaseStore(args.store)];
  const discovered = await discoverAgentStores({ home, env: io.env });
  if (args.root !== undefined) {
    const root = resolveRoot(args.root, io.cwd, io.env);
    await requireDirectory(root);
    return [await storeAt(root, discovered, home, args.agent)];
  }
  if (args.agent === undefined) return discovered;
  const chosen = discovered.filter((store) => store.agent === args.agent);
  if (chosen.length === 0) throw new CliError("not-found", `no store of ${args.agent} found (looked in ${agentHomes(args.agent, io.env, home)})`);
  return chosen;
}

/** Where an agent's stores are looked for, for messages. */
function agentHomes(agent: AgentName, env: NodeJS.ProcessEnv, home: string): string {
  const dirs: Record<AgentName, string> = {
    pi: env.PI_CODING_AGENT_DIR ? tildePath(nodePath.resolve(env.PI_CODING_AGENT_DIR), home) : "~/.pi/agent",
    omp: "~/.omp/agent",
    xcsh: "~/.xcsh/agent",
    indusagi: "~/.indusagi/agent",
    operator: "~/.operator/profiles/*/sessions",
  };
  return dirs[agent];
}

/** The command's session argument: a file, or an id or id prefix of the stores' sessions. */
async function sessionArgument(run: Run): Promise<SessionFileRef> {
  return resolveSessionArgument(run.args.target, await lookupContext(run));
}

/** A listed session: pi's SessionInfo with an absolute `path`, and the agent and store it belongs to. */
type ListedSession = SessionInfo & { agent: AgentName; store: string };

const COMMANDS: Record<ParsedCommand["command"], Command> = { ls, show, context, tree, verify, migrate, export: exportCommand, import: importCommand, serve: serveCommand, search: searchCommand, history: historyCommand, scan: scanCommand, sync: syncCommand, stats: statsCommand };

async function ls(run: Run): Promise<number> {
  const stores = await run.stores();
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  const listed: ListedSession[] = [];
  for (const store of stores) {
    // Read through the cache: the catalog is written there, never into the agent's folder.
    const storage = await storeStorage(store, run.io.env, run.home);
    const progress = listingProgress(run.io.stderr, stores.length > 1 ? `sessionkit: ls: ${store.label}` : "sessionkit: ls");
    try {
      const options = { onProgress: progress.onProgress, withText: run.args.withText };
      const infos = run.args.all ? await SessionManager.listAll(storage, options) : await SessionManager.list(storage, cwd, { ...options, layout: store.layout });
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

async function show(run: Run): Promise<number> {
  const ref = await sessionArgument(run);
  const sm = await openReadOnly(ref, run.warn);
  const header = sm.getHeader()!;
  const name = sm.getSessionName();
  const leafId = sm.getLeafId();
  const context = sm.buildSessionContext();
  const where = ref.store ? { agent: ref.store.agent, store: ref.store.root } : {};
  run.print({ file: ref.absolute, ...where, dialect: sm.getDialect(), header, name, leafId, context }, () => {
    const leaf = sm.getLeafEntry();
    const format = sm.getDialect() === "pi" ? `v${headerVersion(header)}` : dialectName(sm.getDialect());
    const facts = [format, `created ${String(header.timestamp)}`, `cwd ${header.cwd ?? "(none)"}`];
    if (header.parentSession) facts.push(`parent ${header.parentSession}`);
    return [
      `session  ${header.id}`,
      `file     ${ref.absolute}`,
      ...(ref.store ? [`store    ${ref.store.label}`] : []),
      `header   ${facts.join(" · ")}`,
      `name     ${name ?? "(none)"}`,
      leaf
        ? `leaf     ${leaf.id} · ${describeEntry(leaf)} · ${sm.getBranch().length} of ${sm.getEntries().length} entries on its branch`
        : "leaf     (none: the session has no entries)",
      `context  ${renderContextSummary(context)}`,
      "",
      ...renderMessages(context.messages),
    ];
  });
  return 0;
}

async function context(run: Run): Promise<number> {
  const ref = await sessionArgument(run);
  const sm = await openReadOnly(ref, run.warn);
  const leafId = run.args.leaf ?? sm.getLeafId();
  if (run.args.leaf !== undefined && !sm.getEntry(run.args.leaf)) throw new CliError("not-found", `entry ${run.args.leaf} is not in ${ref.absolute}`);
  // The manager builds at its own leaf; another leaf goes through the free function.
  const result = sm.buildSessionContext(run.args.leaf);
  run.print(result, () => [`context of ${ref.absolute} at ${leafId ?? "(no entries)"} · ${renderContextSummary(result)}`, "", ...renderMessages(result.messages)]);
  return 0;
}

async function tree(run: Run): Promise<number> {
  const ref = await sessionArgument(run);
  const sm = await openReadOnly(ref, run.warn);
  const roots = sm.getTree();
  run.print(roots, () => [`${ref.absolute}: ${sm.getEntries().length} entries, leaf ${sm.getLeafId() ?? "(none)"}`, ...renderTree(roots, sm.getLeafId())]);
  return 0;
}

async function verify(run: Run): Promise<number> {
  if (await isArchiveFile(nodePath.resolve(run.io.cwd, run.args.target))) return verifyArchiveCommand(run);
  const ref = await sessionArgument(run);
  const report = await verifySession(ref);
  run.print(report, () => renderVerifyReport(report));
  return report.problems.length > 0 ? EXIT.invalid : EXIT.ok;
}

async function migrate(run: Run): Promise<number> {
  const ref = await sessionArgument(run);
  const before = await readSessionFile(ref.storage, ref.path).catch((error: unknown) => {
    throw asCliError(error, ref);
  });
  if (before.kind !== "session") throw new CliError(before.kind === "missing" ? "not-found" : "invalid", `${ref.absolute} is ${before.kind === "missing" ? "missing" : "empty"}, not a session file`);
  if (before.dialect !== "pi") {
    // Versions and migrations are pi's; a file of another dialect is read as it is.
    run.print({ file: ref.absolute, dialect: before.dialect, fromVersion: null, toVersion: null, migrated: false }, () => [
      `${ref.absolute}: the ${dialectName(before.dialect)} format has no versions, nothing to migrate`,
    ]);
    return 0;
  }
  const fromVersion = before.migratedFrom ?? headerVersion(before.header);
  let toVersion = fromVersion;
  if (before.migratedFrom !== null) {
    // No write bit at all means "keep this as it is", even for a user (root) whom the OS would let write.
    if (ref.onDisk && ((await stat(ref.absolute)).mode & 0o222) === 0) throw new CliError("failed", `${ref.absolute} is write-protected: not migrating it (v${fromVersion})`);
    // The rewrite keeps only what loaded: say which lines it leaves behind (the original stays in
    // <file>.v<N>.bak when there are any).
    for (const problem of before.problems) {
      if (problem.kind !== "glued") {
        run.warn(`${ref.absolute}: line ${problem.line} is not carried over (kept in ${ref.absolute}.v${fromVersion}.bak): ${problem.message.replace(/^line \d+: /, "")}`);
      }
    }
    try {
      // The rewrite is in the form of the store the file is in; a file outside the stores read is
      // not known to be in a store that resolves blob refs: its images stay or go inline.
      const sm = await SessionManager.open(ref.storage, ref.path, ref.store ? { owner: storeOwner(ref.store) } : {});
      await sm.close();
      toVersion = headerVersion(sm.getHeader()!);
    } catch (error) {
      throw asCliError(error, ref);
    } finally {
      await ref.storage.close();
    }
  }
  const migrated = before.migratedFrom !== null;
  const entries = before.entries.length;
  run.print({ file: ref.absolute, dialect: before.dialect, fromVersion, toVersion, migrated }, () => [
    migrated ? `${ref.absolute}: migrated v${fromVersion} → v${toVersion} (${entries} entries)` : `${ref.absolute}: already v${fromVersion}, nothing to migrate`,
  ]);
  return 0;
}
