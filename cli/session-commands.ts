/** The commands of one session: show, context, tree, verify, migrate (the only write). */
import { stat } from "node:fs/promises";
import nodePath from "node:path";
import { dialectName } from "../src/format/dialect.js";
import { headerVersion } from "../src/format/migrate.js";
import { readSessionFile } from "../src/format/session-file.js";
import { SessionManager } from "../src/session/session-manager.js";
import { storeOwner } from "./agent-stores.js";
import type { ContextArgs, SessionArgs } from "./commands/session.js";
import { CliError, EXIT } from "./errors.js";
import { describeEntry, renderContextSummary, renderMessages, renderTree } from "./render.js";
import { lookupContext, type Run } from "./run.js";
import { asCliError, openReadOnly, resolveSessionArgument, type SessionFileRef } from "./session-argument.js";
import { renderVerifyReport, verifySession } from "./verify.js";

/** The command's session argument: a file, or an id or id prefix of the stores' sessions. */
async function sessionArgument(run: Run<SessionArgs>): Promise<SessionFileRef> {
  return resolveSessionArgument(run.args.target, await lookupContext(run));
}

export async function showCommand(run: Run<SessionArgs>): Promise<number> {
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

export async function contextCommand(run: Run<ContextArgs>): Promise<number> {
  const ref = await sessionArgument(run);
  const sm = await openReadOnly(ref, run.warn);
  const leafId = run.args.leaf ?? sm.getLeafId();
  if (run.args.leaf !== undefined && !sm.getEntry(run.args.leaf)) throw new CliError("not-found", `entry ${run.args.leaf} is not in ${ref.absolute}`);
  // The manager builds at its own leaf; another leaf goes through the free function.
  const result = sm.buildSessionContext(run.args.leaf);
  run.print(result, () => [`context of ${ref.absolute} at ${leafId ?? "(no entries)"} · ${renderContextSummary(result)}`, "", ...renderMessages(result.messages)]);
  return 0;
}

export async function treeCommand(run: Run<SessionArgs>): Promise<number> {
  const ref = await sessionArgument(run);
  const sm = await openReadOnly(ref, run.warn);
  const roots = sm.getTree();
  run.print(roots, () => [`${ref.absolute}: ${sm.getEntries().length} entries, leaf ${sm.getLeafId() ?? "(none)"}`, ...renderTree(roots, sm.getLeafId())]);
  return 0;
}

export async function verifyCommand(run: Run<SessionArgs>): Promise<number> {
  // Loaded here: the archive code (zip, hashes) is most of the CLI's, and the other commands need none of it.
  const { isArchiveFile, verifyArchiveCommand } = await import("./archive.js");
  if (await isArchiveFile(nodePath.resolve(run.io.cwd, run.args.target))) return verifyArchiveCommand(run);
  const ref = await sessionArgument(run);
  const report = await verifySession(ref);
  run.print(report, () => renderVerifyReport(report));
  return report.problems.length > 0 ? EXIT.invalid : EXIT.ok;
}

export async function migrateCommand(run: Run<SessionArgs>): Promise<number> {
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
