/**
 * `sessionkit export --jsonl <session> -o out.jsonl`: the session as one session file, its images
 * inline (a file that leaves the store has no blobs/ beside it), as the viewer's "↓ JSONL" writes
 * it; `--leaf` cuts one branch, `--redact` replaces the secrets.
 */
import { realpath } from "node:fs/promises";
import nodePath from "node:path";
import { encodeJsonl } from "../src/format/session-file.js";
import { isSessionError } from "../src/errors.js";
import { redactRecord, type RedactionCounts } from "../src/secrets/redact.js";
import { SessionManager } from "../src/session/session-manager.js";
import { writeOutputFile } from "./output-file.js";
import { CliError, failureKind } from "./errors.js";
import type { ExportArgs } from "./commands/archive.js";
import { lookupContext, type Run } from "./run.js";
import { reportRedaction } from "./scan.js";
import { exportView, resolveSessionArgument } from "./session-argument.js";
import { statOrNull } from "./store.js";

export async function exportJsonlCommand(run: Run<ExportArgs>): Promise<number> {
  const output = nodePath.resolve(run.io.cwd, run.args.output!);
  const outputDir = nodePath.dirname(output);
  if (!(await statOrNull(outputDir))?.isDirectory()) throw new CliError("failed", `${output}: cannot write it (${outputDir} is not a directory)`);
  const existing = await statOrNull(output);
  if (existing?.isDirectory()) throw new CliError("failed", `${output} is a directory (-o names the session file to write)`);
  if (existing && !run.args.force) throw new CliError("failed", `${output} exists: not replacing it (use --force to replace it)`);

  const ref = await resolveSessionArgument(run.args.target, await lookupContext(run));
  try {
    const realOutput = nodePath.join(await realpath(outputDir), nodePath.basename(output));
    if (realOutput === ref.absolute) throw new CliError("usage", `${output} is the session being exported: -o must name another file`);
    const view = exportView([ref]);
    const path = view.relativePaths[0]!;
    const onWarning = (message: string) => run.warn(message.replaceAll(path, view.fileOf(path) ?? path));
    const sm = await SessionManager.open(view.storage, path, { readOnly: true, onWarning });
    const redact = run.args.redact ?? false;
    const redacted: RedactionCounts = {};
    let records: unknown[];
    try {
      if (run.args.leaf !== undefined && !sm.getEntry(run.args.leaf)) throw new CliError("not-found", `${ref.absolute}: no entry ${run.args.leaf} (--leaf)`);
      const entries = run.args.leaf === undefined ? sm.getEntries() : sm.getBranch(run.args.leaf);
      records = [sm.getHeader()!, ...entries];
    } finally {
      await sm.close();
    }
    if (redact) records = records.map((record) => redactRecord(record, redacted));
    const bytes = encodeJsonl(records);
    await writeOutputFile(output, [bytes]);
    if (redact) reportRedaction(run, redacted);
    const summary = { output, sessionId: sm.getSessionId(), entries: records.length - 1, leafId: run.args.leaf, bytes: bytes.length, ...(redact ? { redacted } : {}) };
    run.print(summary, () => [`${output}: session ${summary.sessionId} (${summary.entries} entries${run.args.leaf === undefined ? "" : `, branch to ${run.args.leaf}`}), ${summary.bytes} bytes`]);
    return 0;
  } catch (error) {
    if (isSessionError(error, "not-a-session")) throw new CliError(failureKind(error), error.message);
    throw error;
  } finally {
    await ref.storage.close();
  }
}
