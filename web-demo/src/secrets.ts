/**
 * Secrets in the viewer: the findings of the open session (the header's notice, each finding a
 * link to its entry) and the choice before an export writes a file: the counts per kind and
 * "redact them", on by default for HTML, off for a zip. The app imports this module when a
 * session opens, so the rules (~67 KB) are a chunk of their own, not part of the first page load.
 */
import { redactRecord, type RedactionCounts } from "../../src/secrets/redact.js";
import { findSecretsInRecord } from "../../src/secrets/scan.js";
import type { SessionEntry, SessionHeader } from "../../src/format/types.js";
import { el } from "./render/dom.js";

/** One finding of the open session. */
interface Finding {
  entryId: string | null;
  field: string;
  kind: string;
  preview: string;
}

export function sessionFindings(header: SessionHeader, entries: readonly SessionEntry[]): Finding[] {
  return [
    ...findSecretsInRecord(header).map((found) => ({ entryId: null, ...found })),
    ...entries.flatMap((entry) => findSecretsInRecord(entry).map((found) => ({ entryId: entry.id, ...found }))),
  ];
}

/** The longest stretch of scanning between two yields to the event loop: a large session stays responsive while it is scanned. */
const SLICE_MS = 10;

/** `sessionFindings` of a session's model, its entries parsed one by one (not kept), a slice of at most SLICE_MS per task. */
export async function sessionFindingsInSlices(model: { header: SessionHeader; size: number; peek(i: number): SessionEntry }): Promise<Finding[]> {
  const findings = sessionFindings(model.header, []);
  let sliceStart = performance.now();
  for (let i = 0; i < model.size; i++) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setTimeout(resolve));
      sliceStart = performance.now();
    }
    const entry = model.peek(i);
    for (const found of findSecretsInRecord(entry)) findings.push({ entryId: entry.id, ...found });
  }
  return findings;
}

function countsOf(findings: readonly { kind: string }[]): RedactionCounts {
  const counts: RedactionCounts = {};
  for (const { kind } of findings) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** "3 possible secrets: 2 anthropic-api-key, 1 url-password". */
export function countsText(counts: RedactionCounts, noun = "possible secret"): string {
  const kinds = Object.entries(counts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const total = kinds.reduce((n, [, count]) => n + count, 0);
  return `${total} ${noun}${total === 1 ? "" : "s"}: ${kinds.map(([kind, count]) => `${count} ${kind}`).join(", ")}`;
}

/**
 * The header's notice of a session's findings (none: null): a badge with the count, and each
 * finding, masked, as a link to its entry (`linkTo`), opened in the view by `onOpen`.
 */
export function secretsNotice(findings: readonly Finding[], linkTo: (entryId: string) => string, onOpen: (entryId: string) => void): HTMLElement | null {
  if (findings.length === 0) return null;
  const notice = el(
    "details",
    { class: "notice secrets-notice", id: "secrets-notice" },
    el("summary", {}, el("span", { class: "secrets-badge", id: "secrets-badge", title: "Secrets found in this session (masked); exports can redact them" }, `⚠ ${findings.length}`), ` ${countsText(countsOf(findings))}`),
    el(
      "ul",
      {},
      ...findings.map((finding) =>
        el(
          "li",
          { class: "secret-finding" },
          finding.entryId === null ? el("span", {}, "header") : el("a", { href: linkTo(finding.entryId), "data-entry": finding.entryId }, finding.entryId),
          " ",
          el("code", { class: "secret-kind" }, finding.kind),
          " ",
          el("code", { class: "secret-preview" }, finding.preview),
          " ",
          el("span", { class: "muted" }, finding.field),
        ),
      ),
    ),
  );
  notice.addEventListener("click", (event) => {
    const entryId = (event.target as Element).closest<HTMLElement>("a[data-entry]")?.dataset.entry;
    if (!entryId) return;
    event.preventDefault();
    onOpen(entryId);
  });
  return notice;
}

/**
 * Before an export: with no finding, `{ redact: false }` at once; else a dialog with the counts
 * and a "redact them" box (`redactByDefault`), resolving with the choice, or null when cancelled.
 */
export function askRedaction(findings: readonly Finding[], what: string, redactByDefault: boolean): Promise<{ redact: boolean } | null> {
  if (findings.length === 0) return Promise.resolve({ redact: false });
  const box = el("input", { type: "checkbox", id: "redact-secrets" });
  box.checked = redactByDefault;
  const go = el("button", { type: "button", id: "redact-export", class: "header-btn" }, `Export ${what}`);
  const cancel = el("button", { type: "button", id: "redact-cancel", class: "header-btn" }, "Cancel");
  const dialog = el(
    "dialog",
    { id: "redact-dialog", class: "redact-dialog", "aria-label": "Secrets in this export" },
    el("h2", {}, `This session holds ${countsText(countsOf(findings))}`),
    el("label", {}, box, " Redact them: each becomes [REDACTED:<kind>] in the file (the session here is not changed)"),
    el("div", { class: "redact-buttons" }, go, cancel),
  );
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    const close = (choice: { redact: boolean } | null) => {
      dialog.close();
      dialog.remove();
      resolve(choice);
    };
    go.addEventListener("click", () => close({ redact: box.checked }));
    cancel.addEventListener("click", () => close(null));
    dialog.addEventListener("cancel", () => close(null));
  });
}

/** The session with each secret replaced, and the counts per kind. */
export function redactedSession(header: SessionHeader, entries: readonly SessionEntry[]): { header: SessionHeader; entries: SessionEntry[]; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  return { header: redactRecord(header, counts), entries: entries.map((entry) => redactRecord(entry, counts)), counts };
}

/** A text (the page's title) with its secrets replaced. */
export function redactedText(text: string): string {
  return redactRecord(text, {});
}
