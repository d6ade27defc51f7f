/** The commands. Each returns its exit code; failures throw (main prints them, exit 2). */
import { stat } from "node:fs/promises";
import nodePath from "node:path";
import { buildSessionContext, headerVersion, readSessionFile, SessionManager, sessionDirFor, type SessionInfo } from "../src/index.js";
import type { ParsedCommand } from "./args.js";
import { CliError } from "./errors.js";
import { writeJson } from "./json.js";
import { listingProgress, type ProgressSink } from "./progress.js";
import { describeEntry, renderContextSummary, renderMessages, renderSessionTable, renderTree } from "./render.js";
import { asCliError, openReadOnly, resolveSessionArgument, resolveStore, type CliStore, type SessionFileRef } from "./store.js";
import { renderVerifyReport, verifySession } from "./verify.js";
import { exportCommand, importCommand, isArchiveFile, verifyArchiveCommand } from "./archive.js";

export interface Io {
  stdout(text: string): void;
  stderr: ProgressSink;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface Run {
  args: ParsedCommand;
  io: Io;
  /** Where the sessions are: --store, else the root directory. */
  store: CliStore;
  /** Prints a library warning (skipped lines, missing blobs) on stderr. */
  warn(message: string): void;
  /** Prints lines, or with --json what the API returned. */
  print(json: unknown, lines: () => string[]): void;
}

type Command = (run: Run) => Promise<number>;

export async function runCommand(args: ParsedCommand, io: Io): Promise<number> {
  const run: Run = {
    args,
    io,
    store: resolveStore(args, io.cwd, io.env),
    warn: (message) => io.stderr.write(`sessionkit: ${args.command}: ${message}\n`),
    print(json, lines) {
      if (args.json) {
        if (writeJson(json, io.stdout)) io.stdout("\n");
        return;
      }
      // In batches: the text of a large session is too long for one string.
      let batch = "";
      for (const line of lines()) {
        batch += `${line}\n`;
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
    await run.store.closeAll();
  }
}

/** The command's session argument: a file, or an id or id prefix of the root's sessions. */
function sessionArgument(run: Run): Promise<SessionFileRef> {
  return resolveSessionArgument(run.args.target, run.store, run.io.cwd, run.io.stderr, `sessionkit: ${run.args.command}`);
}

const COMMANDS: Record<ParsedCommand["command"], Command> = { ls, show, context, tree, verify, migrate, export: exportCommand, import: importCommand };

async function ls(run: Run): Promise<number> {
  await run.store.requireExists();
  const storage = await run.store.open();
  const progress = listingProgress(run.io.stderr, "sessionkit: ls");
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  let infos: SessionInfo[];
  try {
    infos = run.args.all
      ? await SessionManager.listAll(storage, { onProgress: progress.onProgress })
      : await SessionManager.list(storage, cwd, { onProgress: progress.onProgress });
  } finally {
    progress.done();
  }
  run.print(infos, () => {
    if (infos.length > 0) return [...renderSessionTable(infos, run.store.nameOf), `${infos.length} session${infos.length === 1 ? "" : "s"}`];
    const where = run.args.all ? "sessions" : sessionDirFor(cwd);
    const place = run.store.kind === "dir" ? run.store.nameOf(where) : `${where} of ${run.store.name}`;
    return [`no sessions${run.args.all ? "" : ` for ${cwd}`} in ${place}`];
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
  run.print({ file: ref.absolute, header, name, leafId, context }, () => {
    const leaf = sm.getLeafEntry();
    const facts = [`v${headerVersion(header)}`, `created ${String(header.timestamp)}`, `cwd ${header.cwd ?? "(none)"}`];
    if (header.parentSession) facts.push(`parent ${header.parentSession}`);
    return [
      `session  ${header.id}`,
      `file     ${ref.absolute}`,
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
  if (run.args.leaf !== undefined && !sm.getEntry(run.args.leaf)) throw new CliError(`entry ${run.args.leaf} is not in ${ref.absolute}`);
  // The manager builds at its own leaf; another leaf goes through the free function.
  const result = run.args.leaf === undefined ? sm.buildSessionContext() : buildSessionContext(sm.getEntries(), run.args.leaf);
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
  return report.problems.length > 0 ? 1 : 0;
}

async function migrate(run: Run): Promise<number> {
  const ref = await sessionArgument(run);
  const before = await readSessionFile(ref.storage, ref.path).catch((error: unknown) => {
    throw asCliError(error, ref);
  });
  if (before.kind !== "session") throw new CliError(`${ref.absolute} is ${before.kind === "missing" ? "missing" : "empty"}, not a session file`);
  const fromVersion = before.migratedFrom ?? headerVersion(before.header);
  let toVersion = fromVersion;
  if (before.migratedFrom !== null) {
    // No write bit at all means "keep this as it is", even for a user (root) whom the OS would let write.
    if (ref.onDisk && ((await stat(ref.absolute)).mode & 0o222) === 0) throw new CliError(`${ref.absolute} is write-protected: not migrating it (v${fromVersion})`);
    // The rewrite keeps only what loaded: say which lines it leaves behind (the original stays in
    // <file>.v<N>.bak when there are any).
    for (const problem of before.problems) {
      if (problem.kind !== "glued") {
        run.warn(`${ref.absolute}: line ${problem.line} is not carried over (kept in ${ref.absolute}.v${fromVersion}.bak): ${problem.message.replace(/^line \d+: /, "")}`);
      }
    }
    try {
      // A file outside a store stays self-contained: its images stay inline.
      const sm = await SessionManager.open(ref.storage, ref.path, { externalizeImages: ref.inStore });
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
  run.print({ file: ref.absolute, fromVersion, toVersion, migrated }, () => [
    migrated ? `${ref.absolute}: migrated v${fromVersion} → v${toVersion} (${entries} entries)` : `${ref.absolute}: already v${fromVersion}, nothing to migrate`,
  ]);
  return 0;
}
