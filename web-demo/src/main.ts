/**
 * The viewer over the browser's own store (IndexedDB or OPFS, remembered per browser): a bundled
 * sample on first run, import by picker or drop (.jsonl, .zip), export of a session or a branch
 * as a zip or as one self-contained HTML file, delete. Sessions are only read: viewing never
 * writes to them and takes no writer lock, so a session another tab writes can be followed.
 */
import "./strict-csp.js";
import { requestPersistence, storageEstimate } from "../../adapters/browser-storage.js";
import { deleteSessionWithBlobs, exportArchive, type ExportSessionSpec, type StoragePort } from "../../src/index.js";
import { ViewerApp, downloadBlob } from "./app/app.js";
import type { SessionAction, SessionView } from "./app/session-view.js";
import { BACKENDS, loadBackendChoice, openViewerStorage, saveBackendChoice, type Backend } from "./backend.js";
import { PortStoreSource, type ViewerStore } from "./data/source.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "./export/embed.js";
import { importSampleOnFirstRun } from "./first-run.js";
import { importFiles } from "./import-files.js";
import { el, formatBytes } from "./render/dom.js";
import { renderImportReport } from "./render/import-report.js";
import "./styles.css";

const STORE_ID = "browser";

const backendSelect = el("select", { id: "backend", "aria-label": "Storage" });
for (const { value, label } of BACKENDS) backendSelect.append(el("option", { value }, label));
const importInput = el("input", { id: "import-input", type: "file", accept: ".jsonl,.zip", multiple: "", hidden: "" });
const persistButton = el("button", { id: "persist", type: "button", class: "header-btn", title: "Ask the browser not to evict the stored sessions" }, "Persist");
const estimateText = el("span", { id: "storage-estimate", class: "muted" });
const dropOverlay = el("div", { id: "drop-overlay", hidden: "" }, el("p", {}, "Drop .jsonl or .zip files to import them"));

const sourceFor = (backend: Backend) => new PortStoreSource("static", [{ id: STORE_ID, label: backend === "opfs" ? "OPFS" : "IndexedDB", storage: openViewerStorage(backend), writable: true }], true);

let app: ViewerApp;

function storage(): StoragePort {
  return app.source.stores[0]!.storage;
}

async function exportZip(view: SessionView, leafId: string | undefined): Promise<void> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const sink = new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk.slice()) });
  const spec: ExportSessionSpec = leafId === undefined ? view.session.path : { path: view.session.path, leafId };
  const summary = await exportArchive(view.session.storage, [spec], sink, { generator: "sessionkit viewer" });
  downloadBlob(new Blob(chunks, { type: "application/zip" }), archiveFileName(view.session.model.header.id, leafId));
  if (summary.missingBlobs.length > 0 || summary.warnings.length > 0) {
    app.notify(el("div", { class: "notice" }, el("p", {}, "Exported with findings:"), el("ul", {}, ...[...summary.warnings, ...summary.missingBlobs.map((b) => `missing image ${b}`)].map((w) => el("li", {}, w)))));
  }
}

/** A file name for a download: the session id, and the leaf for a branch. */
export function archiveFileName(sessionId: string, leafId?: string, extension = "zip"): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return leafId === undefined ? `session-${safe(sessionId)}.${extension}` : `session-${safe(sessionId)}-branch-${safe(leafId)}.${extension}`;
}

async function exportHtml(view: SessionView, branch: boolean): Promise<void> {
  const response = await fetch(new URL(EXPORT_TEMPLATE_FILE, location.href));
  if (!response.ok) throw new Error(`the export template (${EXPORT_TEMPLATE_FILE}) is missing from this build: ${response.status}`);
  const model = view.session.model;
  const leafId = view.state.leafId ?? undefined;
  const { parts, missingBlobs } = await buildExportHtml(await response.text(), {
    storage: view.session.storage,
    path: view.session.path,
    title: model.sessionName() ?? model.header.id,
    ...(branch ? { branch: { header: model.header, entries: view.branchEntries() } } : {}),
  });
  downloadBlob(new Blob(parts as BlobPart[], { type: "text/html" }), archiveFileName(model.header.id, branch ? leafId : undefined, "html"));
  if (missingBlobs.length > 0) app.notify(el("p", { class: "notice" }, `Exported without ${missingBlobs.length} missing image(s).`));
}

function sessionActions(store: ViewerStore, path: string): SessionAction[] {
  const actions: SessionAction[] = [
    { id: "export-zip", label: "Export .zip", title: "The session and its images as an archive", run: (view) => app.run(() => exportZip(view, undefined)) },
    { id: "export-branch-zip", label: "Branch .zip", title: "Only the root → leaf branch, as a session of its own", run: (view) => app.run(() => exportZip(view, view.state.leafId ?? undefined)) },
    { id: "export-html", label: "Export HTML", title: "One HTML file with the viewer and this session, readable offline", run: (view) => app.run(() => exportHtml(view, false)) },
  ];
  if (store.writable) {
    actions.push({
      id: "delete",
      label: "Delete…",
      title: "Delete this session and the images no other session uses",
      run: () =>
        app.run(async () => {
          const info = app.sessions.find((s) => s.path === path);
          const title = info?.name ?? info?.firstMessage ?? path;
          if (!confirm(`Delete “${title}”? Its images are deleted too, unless another session uses them.`)) return;
          await app.view?.destroy();
          const result = await deleteSessionWithBlobs(store.storage, path);
          history.replaceState(null, "", "#");
          app.notify(el("p", { class: "notice" }, `Deleted “${title}”: ${result.removedFiles.length} file(s) and ${result.removedBlobs.length} image(s) no other session uses.`));
          await app.start();
          await refreshEstimate();
        }),
    });
  }
  return actions;
}

async function refreshEstimate(): Promise<void> {
  const estimate = await storageEstimate();
  if (!estimate) {
    estimateText.textContent = "storage estimate unavailable";
    return;
  }
  estimateText.textContent = `${formatBytes(estimate.usageBytes)} used of ${formatBytes(estimate.quotaBytes)} · ${estimate.persisted ? "persistent" : "not persistent"}`;
  persistButton.disabled = estimate.persisted;
}

async function switchTo(backend: Backend): Promise<void> {
  await app.view?.destroy();
  await app.source.close();
  app.source = sourceFor(backend);
  history.replaceState(null, "", "#");
  await importSampleOnFirstRun(storage());
  await app.start();
  await refreshEstimate();
}

async function importSelected(files: File[]): Promise<void> {
  if (files.length === 0) return;
  const results = await importFiles(storage(), files);
  app.notify(renderImportReport(results));
  await app.refreshList();
  const imported = results.find((r) => r.summary && r.summary.sessions.length > 0)?.summary?.sessions[0];
  if (imported) await app.openSession(STORE_ID, imported.path, {});
  await refreshEstimate();
}

const initialBackend = loadBackendChoice();
backendSelect.value = initialBackend;
app = new ViewerApp({
  source: sourceFor(initialBackend),
  showList: true,
  title: "sessionkit viewer",
  sessionActions,
  barControls: [
    el("label", { class: "field" }, "Storage ", backendSelect),
    estimateText,
    persistButton,
    el("label", { class: "header-btn", for: "import-input" }, "Import .jsonl / .zip…"),
    importInput,
  ],
});
document.body.append(app.root, dropOverlay);

backendSelect.addEventListener("change", () => {
  const backend = backendSelect.value as Backend;
  saveBackendChoice(backend);
  void app.run(() => switchTo(backend));
});
persistButton.addEventListener("click", () =>
  void app.run(async () => {
    const persisted = await requestPersistence();
    app.notify(el("p", { class: "notice" }, persisted ? "Storage is persistent: the browser will not evict these sessions." : "The browser did not make storage persistent (Chromium decides from how much the site is used)."));
    await refreshEstimate();
  }),
);
importInput.addEventListener("change", () => {
  const files = [...(importInput.files ?? [])];
  importInput.value = ""; // picking the same file again fires "change" again
  void app.run(() => importSelected(files));
});
const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") ?? false;
window.addEventListener("dragover", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  dropOverlay.hidden = false;
});
window.addEventListener("dragleave", (event) => {
  if (event.relatedTarget === null) dropOverlay.hidden = true;
});
window.addEventListener("drop", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  dropOverlay.hidden = true;
  const files = [...(event.dataTransfer?.files ?? [])];
  void app.run(() => importSelected(files));
});

void app.run(async () => {
  await importSampleOnFirstRun(storage());
  await app.start();
  await refreshEstimate();
});
