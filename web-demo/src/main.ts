/**
 * The session viewer: composes the core (sessions, archives) with a browser storage adapter and
 * the DOM. Sessions are opened read-only: viewing never writes to them and takes no writer lock,
 * so a session being written in another tab can be viewed too.
 */
import { requestPersistence, storageEstimate } from "../../adapters/browser-storage.js";
import { buildSessionContext, deleteSessionWithBlobs, SessionManager, type SessionEntry, type SessionInfo, type SessionTreeNode } from "../../src/index.js";
import { BACKENDS, loadBackendChoice, openViewerStorage, saveBackendChoice, type Backend, type ViewerStorage } from "./backend.js";
import { archiveFileName, downloadBlob, exportToBlob } from "./export-session.js";
import { importSampleOnFirstRun } from "./first-run.js";
import { importFiles } from "./import-files.js";
import { renderContext } from "./render/context.js";
import { el, formatBytes } from "./render/dom.js";
import { renderError, renderImportReport } from "./render/import-report.js";
import { renderSessionHeader } from "./render/session-header.js";
import { renderSessionList, sessionTitle } from "./render/session-list.js";
import { entrySummary, renderTree, showLeaf } from "./render/tree.js";

interface OpenSession {
  path: string;
  sm: SessionManager;
  entries: SessionEntry[];
  tree: SessionTreeNode[];
  /** Findings while opening (missing blobs). */
  warnings: string[];
  /** The entry viewed as the leaf: the session's own leaf until another entry is chosen. */
  viewLeafId: string | null;
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const backendSelect = byId<HTMLSelectElement>("backend");
const importInput = byId<HTMLInputElement>("import-input");
const persistButton = byId<HTMLButtonElement>("persist");
const estimateText = byId<HTMLElement>("storage-estimate");
const messages = byId<HTMLElement>("messages");
const listPane = byId<HTMLElement>("session-list");
const sessionPane = byId<HTMLElement>("session-view");
const dropOverlay = byId<HTMLElement>("drop-overlay");

let storage: ViewerStorage | null = null;
let sessions: SessionInfo[] = [];
let current: OpenSession | null = null;

// ---------------------------------------------------------------------------
// Tasks: one at a time; a failure is shown, never swallowed.
// ---------------------------------------------------------------------------

let queue: Promise<void> = Promise.resolve();
let pendingTasks = 0;

function run(task: () => Promise<void>): Promise<void> {
  pendingTasks++;
  document.body.dataset.status = "busy";
  queue = queue
    .then(task)
    .catch((error: unknown) => {
      console.error(error);
      showMessage(renderError(error));
    })
    .finally(() => {
      if (--pendingTasks === 0) document.body.dataset.status = "ready";
    });
  return queue;
}

function showMessage(content: HTMLElement): void {
  const dismiss = el("button", { type: "button", class: "dismiss", "aria-label": "Dismiss" }, "×");
  const message = el("div", { class: "message-box" }, content, dismiss);
  dismiss.addEventListener("click", () => message.remove());
  messages.replaceChildren(message);
}

function requireStorage(): ViewerStorage {
  if (!storage) throw new Error("no storage is open");
  return storage;
}

// ---------------------------------------------------------------------------
// Storage
// ---------------------------------------------------------------------------

async function start(backend: Backend): Promise<void> {
  await closeSession();
  const previous = storage;
  storage = null;
  await previous?.close().catch(() => {}); // the old store is being left: a failed close changes nothing
  sessions = [];
  listPane.replaceChildren(el("p", { class: "empty" }, "Loading…"));
  sessionPane.replaceChildren(el("p", { class: "empty" }, "Select a session."));
  storage = openViewerStorage(backend);
  await importSampleOnFirstRun(storage);
  await refreshList();
  const first = sessions[0];
  if (first) await openSession(first.path);
  await refreshEstimate();
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

// ---------------------------------------------------------------------------
// Session list and session view
// ---------------------------------------------------------------------------

async function refreshList(): Promise<void> {
  sessions = await SessionManager.listAll(requireStorage());
  renderList();
}

function renderList(): void {
  listPane.replaceChildren(renderSessionList(sessions, { selectedPath: current?.path ?? null, onOpen: (path) => void run(() => openSession(path)) }));
}

async function closeSession(): Promise<void> {
  const open = current;
  current = null;
  await open?.sm.close();
}

async function openSession(path: string): Promise<void> {
  await closeSession();
  const warnings: string[] = [];
  const sm = await SessionManager.open(requireStorage(), path, { readOnly: true, onWarning: (w) => warnings.push(w) });
  current = { path, sm, entries: sm.getEntries(), tree: sm.getTree(), warnings, viewLeafId: sm.getLeafId() };
  renderList();
  renderSession(current);
}

function renderSession(open: OpenSession): void {
  const { sm } = open;
  const header = renderSessionHeader({
    path: open.path,
    header: sm.getHeader()!,
    name: sm.getSessionName(),
    entryCount: open.entries.length,
    problems: sm.getLoadProblems(),
    migratedFrom: sm.getMigratedFrom(),
    warnings: open.warnings,
  });
  const exportSession = el("button", { id: "export-session", type: "button" }, "Export session (.zip)");
  const exportBranch = el("button", { id: "export-branch", type: "button", title: "Only the root → selected entry path, as a session of its own" }, "Export branch to selected entry");
  const deleteButton = el("button", { id: "delete-session", type: "button", class: "danger" }, "Delete…");
  exportSession.addEventListener("click", () => void run(() => exportCurrent(open, undefined)));
  exportBranch.addEventListener("click", () => void run(() => exportCurrent(open, open.viewLeafId ?? undefined)));
  deleteButton.addEventListener("click", () => void run(() => deleteCurrent(open)));

  const contextHeading = el("h3", {});
  const contextBox = el("div", { id: "context" });
  const showContext = () => {
    const leaf = open.viewLeafId === null ? undefined : sm.getEntry(open.viewLeafId);
    contextHeading.replaceChildren("Context ", el("span", { class: "detail" }, leaf ? `up to ${entrySummary(leaf)}` : "(empty)"));
    contextBox.replaceChildren(renderContext(buildSessionContext(open.entries, open.viewLeafId)));
  };
  const tree = renderTree(open.tree, {
    leafId: open.viewLeafId,
    onSelect: (entryId) => {
      open.viewLeafId = entryId;
      showLeaf(tree, entryId);
      showContext();
    },
  });
  showContext();
  sessionPane.replaceChildren(
    el("div", { class: "session-top" }, header, el("div", { class: "toolbar" }, exportSession, exportBranch, deleteButton)),
    el(
      "div",
      { class: "session-body" },
      el("div", { class: "tree-pane" }, el("h3", {}, "Tree ", el("span", { class: "detail" }, "click an entry to view its branch")), el("div", { id: "tree" }, tree)),
      el("div", { class: "context-pane" }, contextHeading, contextBox),
    ),
  );
}

// ---------------------------------------------------------------------------
// Import, export, delete
// ---------------------------------------------------------------------------

async function importSelected(files: File[]): Promise<void> {
  if (files.length === 0) return;
  const results = await importFiles(requireStorage(), files);
  showMessage(renderImportReport(results));
  await refreshList();
  const imported = results.find((r) => r.summary && r.summary.sessions.length > 0)?.summary?.sessions[0];
  if (imported) await openSession(imported.path);
  await refreshEstimate();
}

async function exportCurrent(open: OpenSession, leafId: string | undefined): Promise<void> {
  const { blob, summary } = await exportToBlob(requireStorage(), leafId === undefined ? open.path : { path: open.path, leafId });
  downloadBlob(blob, archiveFileName(open.sm.getSessionId(), leafId));
  if (summary.missingBlobs.length > 0 || summary.warnings.length > 0) {
    showMessage(el("div", { class: "notice" }, el("p", {}, "Exported with findings:"), el("ul", {}, ...[...summary.warnings, ...summary.missingBlobs.map((b) => `missing image ${b}`)].map((w) => el("li", {}, w)))));
  }
}

async function deleteCurrent(open: OpenSession): Promise<void> {
  const info = sessions.find((s) => s.path === open.path);
  const title = info ? sessionTitle(info) : open.path;
  if (!confirm(`Delete “${title}”? Its images are deleted too, unless another session uses them.`)) return;
  await closeSession();
  const result = await deleteSessionWithBlobs(requireStorage(), open.path);
  showMessage(el("p", { class: "notice" }, `Deleted “${title}”: ${result.removedFiles.length} file(s) and ${result.removedBlobs.length} image(s) no other session uses.`));
  await refreshList();
  const next = sessions[0];
  if (next) await openSession(next.path);
  else sessionPane.replaceChildren(el("p", { class: "empty" }, "No session stored."));
  await refreshEstimate();
}

// ---------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------

for (const { value, label } of BACKENDS) backendSelect.append(el("option", { value }, label));
const initialBackend = loadBackendChoice();
backendSelect.value = initialBackend;
backendSelect.addEventListener("change", () => {
  const backend = backendSelect.value as Backend;
  saveBackendChoice(backend);
  void run(() => start(backend));
});

persistButton.addEventListener("click", () =>
  void run(async () => {
    const persisted = await requestPersistence();
    showMessage(el("p", { class: "notice" }, persisted ? "Storage is persistent: the browser will not evict these sessions." : "The browser did not make storage persistent (Chromium decides from how much the site is used)."));
    await refreshEstimate();
  }),
);

importInput.addEventListener("change", () => {
  const files = [...(importInput.files ?? [])];
  importInput.value = ""; // picking the same file again fires "change" again
  void run(() => importSelected(files));
});

const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") ?? false;
window.addEventListener("dragover", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  dropOverlay.hidden = false;
});
window.addEventListener("dragleave", (event) => {
  if (event.relatedTarget === null) dropOverlay.hidden = true; // left the window
});
window.addEventListener("drop", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  dropOverlay.hidden = true;
  const files = [...(event.dataTransfer?.files ?? [])];
  void run(() => importSelected(files));
});

void run(() => start(initialBackend));
