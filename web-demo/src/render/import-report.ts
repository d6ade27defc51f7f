/** What an import did, per archive or batch of .jsonl files, or why it failed. */
import type { ImportSummary } from "../../../src/archive/import.js";
import { isArchiveError } from "../../../src/archive/errors.js";
import { isSessionError } from "../../../src/errors.js";
import { isStorageError } from "../../../src/port.js";
import { el } from "./dom.js";

export interface ImportUnitResult {
  /** File names of the unit: one archive, or the .jsonl files imported as one batch. */
  files: string[];
  summary?: ImportSummary;
  error?: unknown;
}

export function renderImportReport(results: readonly ImportUnitResult[]): HTMLElement {
  const report = el("section", { class: "import-report" });
  for (const result of results) {
    const unit = el("div", { class: result.error === undefined ? "import-unit" : "import-unit failed" }, el("h3", {}, result.files.join(", ")));
    if (result.error !== undefined) unit.append(renderError(result.error));
    else if (result.summary) unit.append(renderSummary(result.summary));
    report.append(unit);
  }
  return report;
}

function renderSummary(summary: ImportSummary): HTMLElement {
  const sessions = el(
    "ul",
    { class: "imported-sessions" },
    ...summary.sessions.map((s) =>
      el(
        "li",
        { "data-action": s.action },
        el("span", { class: `action action-${s.action}` }, s.action),
        ` ${s.id} `,
        el("span", { class: "detail" }, `(${s.newEntries} of ${s.entries} entries new; ${s.reason})`),
      ),
    ),
  );
  const { written, present } = summary.blobs;
  return el(
    "div",
    {},
    sessions,
    el("p", { class: "detail" }, `Images: ${written} stored, ${present} already present.`),
    summary.missingBlobs.length > 0 && el("p", { class: "warning-text" }, `Missing images: ${summary.missingBlobs.join(", ")}`),
    summary.warnings.length > 0 && el("ul", { class: "warnings" }, ...summary.warnings.map((w) => el("li", {}, w))),
  );
}

/** An error, with its code and (for archives) the member it is about. */
export function renderError(error: unknown): HTMLElement {
  const fields: [string, string][] = [];
  if (isArchiveError(error)) {
    fields.push(["code", error.code]);
    if (error.member !== undefined) fields.push(["member", error.member]);
  } else if (isStorageError(error) || isSessionError(error)) {
    fields.push(["code", error.code]);
    if (error.path !== undefined) fields.push(["path", error.path]);
  }
  const message = error instanceof Error ? error.message : String(error);
  const kind = error instanceof Error ? error.name : "Error";
  return el(
    "div",
    { class: "error", role: "alert" },
    el("p", { class: "error-kind" }, kind),
    fields.length > 0 && el("dl", {}, ...fields.map(([name, value]) => el("div", { "data-field": name }, el("dt", {}, name), el("dd", {}, value)))),
    el("p", { class: "error-message" }, message),
  );
}
