/** What the session file says about itself (header fields), and what went wrong reading it. */
import type { LineProblem, SessionHeader } from "../../../src/index.js";
import { el, formatDate } from "./dom.js";

export interface SessionHeaderView {
  path: string;
  header: SessionHeader;
  name: string | undefined;
  entryCount: number;
  /** Lines the loader skipped or recovered. */
  problems: readonly LineProblem[];
  /** The version the file was migrated from on load, null when current. */
  migratedFrom: number | null;
  /** Other findings while opening (missing blobs). */
  warnings: readonly string[];
}

export function renderSessionHeader(view: SessionHeaderView): HTMLElement {
  const { header } = view;
  const fields: [string, string | undefined][] = [
    ["id", header.id],
    ["cwd", header.cwd],
    ["created", formatDate(header.timestamp)],
    ["version", header.version === undefined ? "1 (no version field)" : String(header.version)],
    ["parent session", header.parentSession],
    ["entries (all types, all branches)", String(view.entryCount)],
    ["file", view.path],
  ];
  const list = el("dl", { class: "header-fields" });
  for (const [name, value] of fields) {
    if (value === undefined || value === "") continue;
    list.append(el("div", { "data-field": name }, el("dt", {}, name), el("dd", {}, value)));
  }
  return el("section", { class: "session-header" }, el("h2", {}, view.name ?? header.title ?? "Unnamed session"), list, renderLoadNotice(view));
}

/** A notice when the file was not read exactly as written; null when it was. */
export function renderLoadNotice(view: Pick<SessionHeaderView, "problems" | "migratedFrom" | "warnings">): HTMLElement | null {
  if (view.problems.length === 0 && view.migratedFrom === null && view.warnings.length === 0) return null;
  const notice = el("div", { class: "notice load-notice", role: "status" });
  if (view.problems.length > 0) {
    const skipped = view.problems.filter((p) => p.kind === "unparseable" || p.kind === "not-object" || p.kind === "torn").length;
    const recovered = view.problems.length - skipped;
    const parts = [skipped > 0 && `${skipped} skipped`, recovered > 0 && `${recovered} recovered`].filter(Boolean).join(", ");
    notice.append(
      el("p", {}, `Some lines were not read as written (${parts}):`),
      el("ul", {}, ...view.problems.map((p) => el("li", { "data-kind": p.kind }, `line ${p.line}: ${p.kind} — ${p.message}`))),
    );
  }
  if (view.migratedFrom !== null) notice.append(el("p", {}, `Stored as version ${view.migratedFrom}; shown migrated to version 3 (the file is unchanged).`));
  if (view.warnings.length > 0) notice.append(el("ul", { class: "warnings" }, ...view.warnings.map((w) => el("li", {}, w))));
  return notice;
}
