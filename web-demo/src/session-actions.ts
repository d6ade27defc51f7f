/**
 * What the viewer offers on an open session beyond the JSONL downloads, in both of the app's
 * modes: export as a zip (the session or the viewed branch), as one self-contained HTML file, and
 * delete (only for a store the viewer may change). The archive writer (zip.js, hashing) and the
 * deletion load when used: they are no part of showing a session.
 */
import type { ExportSessionSpec } from "../../src/archive/export.js";
import { downloadBlob, type ViewerApp } from "./app/app.js";
import type { SessionAction, SessionView } from "./app/session-view.js";
import type { LoadedSession } from "./data/load-session.js";
import type { ViewerStore } from "./data/source.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "./export/embed.js";
import { el } from "./render/dom.js";

/** A file name for a download: the session id, and the leaf for a branch. */
function archiveFileName(sessionId: string, leafId?: string, extension = "zip"): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return leafId === undefined ? `session-${safe(sessionId)}.${extension}` : `session-${safe(sessionId)}-branch-${safe(leafId)}.${extension}`;
}

/** The secrets of what an export writes (the session, or the branch to `leafId`), and whether to redact them: null when cancelled. */
async function redactionChoice(view: SessionView, leafId: string | undefined, what: string, redactByDefault: boolean): Promise<{ redact: boolean } | null> {
  const secrets = await import("./secrets.js");
  const entries = leafId === undefined ? view.session.model.allEntries() : view.branchEntries();
  return secrets.askRedaction(secrets.sessionFindings(view.session.model.header, entries), what, redactByDefault);
}

/** What an export redacted, said after the file is written. */
async function notifyRedacted(app: ViewerApp, counts: Record<string, number> | undefined): Promise<void> {
  if (!counts || Object.keys(counts).length === 0) return;
  const { countsText } = await import("./secrets.js");
  app.notify(el("p", { class: "notice", id: "redacted-notice" }, `Exported with ${countsText(counts, "secret")} redacted.`));
}

async function exportZip(app: ViewerApp, view: SessionView, leafId: string | undefined): Promise<void> {
  // An archive is a backup and a transfer: redaction offered, off by default.
  const choice = await redactionChoice(view, leafId, ".zip", false);
  if (!choice) return;
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const sink = new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk.slice()) });
  const spec: ExportSessionSpec = leafId === undefined ? view.session.path : { path: view.session.path, leafId };
  const { exportArchive } = await import("../../src/archive/export.js");
  const summary = await exportArchive(view.session.storage, [spec], sink, { generator: "sessionkit viewer", redact: choice.redact });
  downloadBlob(new Blob(chunks, { type: "application/zip" }), archiveFileName(view.session.model.header.id, leafId));
  await notifyRedacted(app, summary.redacted);
  if (summary.missingBlobs.length > 0 || summary.warnings.length > 0) {
    app.notify(el("div", { class: "notice" }, el("p", {}, "Exported with findings:"), el("ul", {}, ...[...summary.warnings, ...summary.missingBlobs.map((b) => `missing image ${b}`)].map((w) => el("li", {}, w)))));
  }
}

async function exportHtml(app: ViewerApp, view: SessionView): Promise<void> {
  // A page is made to be shared: redaction offered, on by default.
  const choice = await redactionChoice(view, undefined, "HTML", true);
  if (!choice) return;
  const response = await fetch(new URL(EXPORT_TEMPLATE_FILE, location.href));
  if (!response.ok) throw new Error(`the export template (${EXPORT_TEMPLATE_FILE}) is missing from this build: ${response.status}`);
  const model = view.session.model;
  const title = model.sessionName() ?? model.header.id;
  // Redacted, the page carries the parsed entries re-serialized (as the CLI's does) instead of the file.
  const secrets = choice.redact ? await import("./secrets.js") : null;
  const redacted = secrets?.redactedSession(model.header, model.allEntries());
  const { parts, missingBlobs } = await buildExportHtml(await response.text(), {
    storage: view.session.storage,
    path: view.session.path,
    title: secrets ? secrets.redactedText(title) : title,
    ...(redacted ? { branch: { header: redacted.header, entries: redacted.entries } } : {}),
  });
  downloadBlob(new Blob(parts as BlobPart[], { type: "text/html" }), archiveFileName(model.header.id, undefined, "html"));
  await notifyRedacted(app, redacted?.counts);
  if (missingBlobs.length > 0) app.notify(el("p", { class: "notice" }, `Exported without ${missingBlobs.length} missing image(s).`));
}

/**
 * The open session's secrets as a notice for its header (AppOptions.sessionNotice): the rules
 * load as a chunk of their own, and a large session is scanned a slice of entries per task.
 */
export async function secretsNotice(session: LoadedSession, linkTo: (entryId: string) => string, open: (entryId: string) => void): Promise<HTMLElement | null> {
  const secrets = await import("./secrets.js");
  return secrets.secretsNotice(await secrets.sessionFindingsInSlices(session.model), linkTo, open);
}

/**
 * The actions for a session of `store`. `afterDelete` runs once a session was deleted (the mode
 * refreshes what depends on the store's contents).
 */
export function sessionActions(app: ViewerApp, store: ViewerStore, path: string, afterDelete: () => Promise<void>): SessionAction[] {
  const actions: SessionAction[] = [
    { id: "export-zip", label: "Export .zip", title: "The session and its images as an archive", run: (view) => app.run(() => exportZip(app, view, undefined)) },
    { id: "export-branch-zip", label: "Branch .zip", title: "Only the root → leaf branch, as a session of its own", run: (view) => app.run(() => exportZip(app, view, view.state.leafId ?? undefined)) },
    { id: "export-html", label: "Export HTML", title: "One HTML file with the viewer and this session, readable offline", run: (view) => app.run(() => exportHtml(app, view)) },
  ];
  if (store.writable) {
    actions.push({
      id: "delete",
      label: "Delete…",
      title: "Delete this session and the images no other session uses",
      run: () =>
        app.run(async () => {
          const info = app.sessions.find((s) => s.storeId === store.id && s.path === path);
          const title = info?.name ?? info?.firstMessage ?? path;
          if (!confirm(`Delete “${title}”? Its images are deleted too, unless another session uses them.`)) return;
          await app.view?.destroy();
          const { deleteSessionWithBlobs } = await import("../../src/session/delete-session.js");
          const result = await deleteSessionWithBlobs(store.storage, path);
          history.replaceState(null, "", "#");
          app.notify(el("p", { class: "notice" }, `Deleted “${title}”: ${result.removedFiles.length} file(s) and ${result.removedBlobs.length} image(s) no other session uses.`));
          await app.start();
          await afterDelete();
        }),
    });
  }
  return actions;
}
