/**
 * What the viewer offers on an open session beyond the JSONL downloads, in both of the app's
 * modes: export as a zip (the session or the viewed branch), as one self-contained HTML file, and
 * delete (only for a store the viewer may change).
 */
import { deleteSessionWithBlobs } from "../../src/session/delete-session.js";
import { exportArchive, type ExportSessionSpec } from "../../src/archive/export.js";
import { downloadBlob, type ViewerApp } from "./app/app.js";
import type { SessionAction, SessionView } from "./app/session-view.js";
import type { ViewerStore } from "./data/source.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "./export/embed.js";
import { el } from "./render/dom.js";

/** A file name for a download: the session id, and the leaf for a branch. */
function archiveFileName(sessionId: string, leafId?: string, extension = "zip"): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return leafId === undefined ? `session-${safe(sessionId)}.${extension}` : `session-${safe(sessionId)}-branch-${safe(leafId)}.${extension}`;
}

async function exportZip(app: ViewerApp, view: SessionView, leafId: string | undefined): Promise<void> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const sink = new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk.slice()) });
  const spec: ExportSessionSpec = leafId === undefined ? view.session.path : { path: view.session.path, leafId };
  const summary = await exportArchive(view.session.storage, [spec], sink, { generator: "sessionkit viewer" });
  downloadBlob(new Blob(chunks, { type: "application/zip" }), archiveFileName(view.session.model.header.id, leafId));
  if (summary.missingBlobs.length > 0 || summary.warnings.length > 0) {
    app.notify(el("div", { class: "notice" }, el("p", {}, "Exported with findings:"), el("ul", {}, ...[...summary.warnings, ...summary.missingBlobs.map((b) => `missing image ${b}`)].map((w) => el("li", {}, w)))));
  }
}

async function exportHtml(app: ViewerApp, view: SessionView): Promise<void> {
  const response = await fetch(new URL(EXPORT_TEMPLATE_FILE, location.href));
  if (!response.ok) throw new Error(`the export template (${EXPORT_TEMPLATE_FILE}) is missing from this build: ${response.status}`);
  const model = view.session.model;
  const { parts, missingBlobs } = await buildExportHtml(await response.text(), {
    storage: view.session.storage,
    path: view.session.path,
    title: model.sessionName() ?? model.header.id,
  });
  downloadBlob(new Blob(parts as BlobPart[], { type: "text/html" }), archiveFileName(model.header.id, undefined, "html"));
  if (missingBlobs.length > 0) app.notify(el("p", { class: "notice" }, `Exported without ${missingBlobs.length} missing image(s).`));
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
