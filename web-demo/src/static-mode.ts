/**
 * The viewer over the browser's own store (IndexedDB or OPFS, remembered per browser): a bundled
 * sample on first run, import by picker or drop (.jsonl, .zip), export, delete, search across
 * sessions with the index kept in the same store. Sessions are only read: viewing never writes
 * to them and takes no writer lock, so a session another tab writes can be followed.
 */
import { requestPersistence, storageEstimate } from "../../adapters/browser-storage.js";
import type { StoragePort } from "../../src/port.js";
import { ViewerApp } from "./app/app.js";
import { BACKENDS, loadBackendChoice, openViewerStorage, saveBackendChoice, type Backend } from "./backend.js";
import { searchWithIndex } from "./data/index-search.js";
import { PortStoreSource } from "./data/source.js";
import { importSampleOnFirstRun } from "./first-run.js";
import { importFiles } from "./import-files.js";
import { el, formatBytes } from "./render/dom.js";
import { renderImportReport } from "./render/import-report.js";
import { secretsNotice, sessionActions } from "./session-actions.js";
import { openInsights } from "./insights/open.js";

const STORE_ID = "browser";

export function startStaticMode(): void {
  const backendSelect = el("select", { id: "backend", "aria-label": "Storage" });
  for (const { value, label } of BACKENDS) backendSelect.append(el("option", { value }, label));
  const importInput = el("input", { id: "import-input", type: "file", accept: ".jsonl,.zip", multiple: "", hidden: "" });
  const persistButton = el("button", { id: "persist", type: "button", class: "header-btn", title: "Ask the browser not to evict the stored sessions" }, "Persist");
  const estimateText = el("span", { id: "storage-estimate", class: "muted" });
  const dropOverlay = el("div", { id: "drop-overlay", hidden: "" }, el("p", {}, "Drop .jsonl or .zip files to import them"));

  // Called when the store is first opened, after `app` exists.
  const reportDataLoss = (message: string) =>
    app.notify(el("p", { class: "notice", role: "alert" }, `The browser found its stored sessions corrupt and deleted them (${message}). Sessions imported before are gone: import them again from their files.`));
  const sourceFor = (backend: Backend) =>
    new PortStoreSource("static", [{ id: STORE_ID, label: backend === "opfs" ? "OPFS" : "IndexedDB", storage: openViewerStorage(backend, reportDataLoss), writable: true }], true, searchWithIndex);

  const initialBackend = loadBackendChoice();
  backendSelect.value = initialBackend;
  const app: ViewerApp = new ViewerApp({
    source: sourceFor(initialBackend),
    showList: true,
    title: "sessionkit viewer",
    sessionActions: (store, path) => sessionActions(app, store, path, refreshEstimate),
    sessionNotice: secretsNotice,
    insights: openInsights,
    barControls: [
      el("label", { class: "field" }, "Storage ", backendSelect),
      estimateText,
      persistButton,
      el("label", { class: "header-btn", for: "import-input" }, "Import .jsonl / .zip…"),
      importInput,
    ],
  });
  document.body.append(app.root, dropOverlay);

  const storage = (): StoragePort => app.source.stores[0]!.storage;

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
}
