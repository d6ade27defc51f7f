/**
 * `sessionkit export --html <session> -o out.html`: one HTML file holding the viewer and the
 * session (its images inline), readable offline from file://. The viewer's export build
 * (web-demo/dist/export-template.html, made by `npx vite build web-demo`) is filled by the same
 * code the viewer's "Export HTML" button runs (web-demo/src/export/embed.ts).
 */
import { existsSync } from "node:fs";
import { readFile, realpath } from "node:fs/promises";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager } from "../src/session/session-manager.js";
import { isSessionError } from "../src/errors.js";
import { redactRecord, type RedactionCounts } from "../src/secrets/redact.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "../web-demo/src/export/embed.js";
import type { ExportArgs } from "./commands/archive.js";
import { lookupContext, type Run } from "./run.js";
import { writeOutputFile } from "./output-file.js";
import { CliError, failureKind } from "./errors.js";
import { reportRedaction } from "./scan.js";
import { exportView, resolveSessionArgument } from "./session-argument.js";
import { statOrNull } from "./store.js";

/** The built template: web-demo/dist beside the package's own folders (source or dist/ layout). */
function exportTemplatePath(): string | null {
  let dir = nodePath.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = nodePath.join(dir, "web-demo", "dist", EXPORT_TEMPLATE_FILE);
    if (existsSync(candidate)) return candidate;
    dir = nodePath.dirname(dir);
  }
  return null;
}

export async function exportHtmlCommand(run: Run<ExportArgs>): Promise<number> {
  const output = nodePath.resolve(run.io.cwd, run.args.output!);
  const outputDir = nodePath.dirname(output);
  if (!(await statOrNull(outputDir))?.isDirectory()) throw new CliError("failed", `${output}: cannot write it (${outputDir} is not a directory)`);
  const existing = await statOrNull(output);
  if (existing?.isDirectory()) throw new CliError("failed", `${output} is a directory (-o names the HTML file to write)`);
  if (existing && !run.args.force) throw new CliError("failed", `${output} exists: not replacing it (use --force to replace it)`);
  const templatePath = exportTemplatePath();
  if (!templatePath) throw new CliError("failed", `the viewer's ${EXPORT_TEMPLATE_FILE} is not built: run \`npx vite build web-demo\` first`);
  const template = await readFile(templatePath, "utf8");

  const ref = await resolveSessionArgument(run.args.target, await lookupContext(run));
  try {
    const realOutput = nodePath.join(await realpath(outputDir), nodePath.basename(output));
    if (realOutput === ref.absolute) throw new CliError("usage", `${output} is the session being exported: -o must name another file`);
    const view = exportView([ref]);
    const path = view.relativePaths[0]!;
    // Warnings name the file, not its path in the export's storage.
    let warned = false;
    // A replacer function: a file name may hold "$&" and the like, which a replacement string reads as patterns.
    const onWarning = (message: string) => {
      warned = true;
      run.warn(message.replaceAll(path, () => view.fileOf(path) ?? path));
    };
    const sm = await SessionManager.open(view.storage, path, { readOnly: true, resolveImages: "lazy", onWarning });
    let branch: { header: Record<string, unknown>; entries: ReturnType<SessionManager["getBranch"]> } | undefined;
    // An HTML page is made to be shared: redacted unless --no-redact.
    const redact = run.args.redact ?? true;
    const redacted: RedactionCounts = {};
    try {
      if (run.args.leaf !== undefined) {
        if (!sm.getEntry(run.args.leaf)) throw new CliError("not-found", `${ref.absolute}: no entry ${run.args.leaf} (--leaf)`);
        branch = { header: sm.getHeader()!, entries: sm.getBranch(run.args.leaf) };
      }
      // Redacted, the page gets the parsed entries re-serialized (as a branch is) in place of the
      // file's bytes; ids, parents and image refs are kept. A clean file with nothing to redact
      // goes as stored; one with lines that did not load (warned about) never does: they could
      // hold what no rule was run on.
      if (redact) {
        const { header, entries } = branch ?? { header: sm.getHeader()!, entries: sm.getEntries() };
        const copy = { header: redactRecord(header, redacted), entries: entries.map((entry) => redactRecord(entry, redacted)) };
        if (branch || warned || Object.keys(redacted).length > 0) branch = copy;
      }
    } finally {
      await sm.close();
    }
    // The name is in the page's <title> too (its session_info entry is counted already).
    const name = sm.getSessionName() ?? sm.getSessionId();
    const title = redact ? redactRecord(name, {}) : name;
    const { parts, missingBlobs } = await buildExportHtml(template, { storage: view.storage, path, title, ...(branch ? { branch } : {}) });
    for (const ref of missingBlobs) run.warn(`${ref} is referenced but not stored: the page shows it as missing`);
    const bytes = await writeOutputFile(output, parts);
    if (redact) reportRedaction(run, redacted);
    const summary = { output, sessionId: sm.getSessionId(), entries: branch ? branch.entries.length : sm.getEntries().length, leafId: run.args.leaf, bytes, missingBlobs, ...(redact ? { redacted } : {}) };
    run.print(summary, () => [`${output}: session ${summary.sessionId} (${summary.entries} entries${run.args.leaf === undefined ? "" : `, branch to ${run.args.leaf}`}), ${bytes} bytes`]);
    return 0;
  } catch (error) {
    if (isSessionError(error, "not-a-session")) throw new CliError(failureKind(error), error.message);
    throw error;
  } finally {
    await ref.storage.close();
  }
}
