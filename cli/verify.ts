/**
 * `verify`: everything wrong with a session file, each with its line number, read-only.
 */
import { BlobStore, parseBlobRef } from "../src/blobs/blob-store.js";
import { collectBlobRefs } from "../src/blobs/images.js";
import { dialectName, type SessionDialect } from "../src/format/dialect.js";
import { headerVersion } from "../src/format/migrate.js";
import { readSessionFile } from "../src/format/session-file.js";
import type { LineProblem } from "../src/format/jsonl-reader.js";
import { CliError } from "./errors.js";
import { asCliError, type SessionFileRef } from "./session-argument.js";

type VerifyProblemKind =
  | "bad-line" // not JSON, or JSON that is not an object: skipped on load
  | "glued-line" // several objects on one line (a torn append): recovered, but the file is damaged
  | "torn-tail" // the last line is incomplete: a crash mid-append
  | "extra-header" // a second session header (left by an old fork bug): skipped on load
  | "invalid-entry" // fails its entry type's schema
  | "duplicate-id" // an id already used by an earlier entry
  | "dangling-parent" // parentId names no entry of the file
  | "missing-blob"; // a blob ref whose blobs/<hash> is absent

interface VerifyProblem {
  kind: VerifyProblemKind;
  /** 1-based line of the file (the header is line 1). */
  line: number;
  /** The entry's id (after migration, for v1 files whose entries have none on disk). */
  entryId?: string;
  message: string;
}

export interface VerifyReport {
  file: string;
  /** The dialect the file is written in. */
  dialect: SessionDialect;
  /** The version the file declares (1 when it declares none); null in a dialect without versions (seed 003). */
  version: number | null;
  /** The version it would be migrated to on load, or null when it is current. */
  migratesTo: number | null;
  entries: number;
  /** Distinct blob refs in the file. */
  blobRefs: number;
  problems: VerifyProblem[];
}

const LINE_PROBLEM_KIND: Record<LineProblem["kind"], VerifyProblemKind> = {
  unparseable: "bad-line",
  "not-object": "bad-line",
  glued: "glued-line",
  torn: "torn-tail",
  "invalid-entry": "invalid-entry",
  "extra-header": "extra-header",
};

export async function verifySession(ref: SessionFileRef): Promise<VerifyReport> {
  let file;
  try {
    file = await readSessionFile(ref.storage, ref.path);
  } catch (error) {
    throw asCliError(error, ref);
  }
  if (file.kind !== "session") throw new CliError(file.kind === "missing" ? "not-found" : "invalid", `${ref.absolute} is ${file.kind === "missing" ? "missing" : "empty"}, not a session file`);

  const problems: VerifyProblem[] = [];
  for (const problem of file.problems) {
    problems.push({
      kind: LINE_PROBLEM_KIND[problem.kind],
      line: problem.line,
      ...(problem.entryId === undefined ? {} : { entryId: problem.entryId }),
      message: problem.message.replace(/^line \d+: (invalid entry: )?/, ""),
    });
  }

  const ids = new Set(file.entries.map((entry) => entry.id));
  const firstLineOfId = new Map<string, number>();
  const blobs = new BlobStore(ref.storage);
  const blobPresent = new Map<string, boolean>();
  for (let i = 0; i < file.entries.length; i++) {
    const entry = file.entries[i]!;
    const line = file.entryLines[i]!;
    const at = (kind: VerifyProblemKind, message: string) => problems.push({ kind, line, entryId: entry.id, message });

    const seenAt = firstLineOfId.get(entry.id);
    if (seenAt !== undefined) at("duplicate-id", `id ${entry.id} is already used by the entry on line ${seenAt}`);
    else firstLineOfId.set(entry.id, line);

    if (typeof entry.parentId === "string" && !ids.has(entry.parentId)) at("dangling-parent", `parent ${entry.parentId} is not in the file`);

    for (const blobRef of collectBlobRefs(entry)) {
      const hash = parseBlobRef(blobRef);
      let present = blobPresent.get(blobRef);
      if (present === undefined) {
        present = hash !== null && (await blobs.has(blobRef));
        blobPresent.set(blobRef, present);
      }
      if (present) continue;
      if (hash === null) at("missing-blob", `malformed blob ref ${JSON.stringify(blobRef.slice(0, 80))}`);
      else at("missing-blob", `${blobRef}: ${ref.nameOf(blobs.pathOf(hash))} does not exist`);
    }
  }
  problems.sort((a, b) => a.line - b.line);

  return {
    file: ref.absolute,
    dialect: file.dialect,
    version: file.dialect === "pi" ? (file.migratedFrom ?? headerVersion(file.header)) : null,
    migratesTo: file.migratedFrom === null ? null : headerVersion(file.header),
    entries: file.entries.length,
    blobRefs: blobPresent.size,
    problems,
  };
}

export function renderVerifyReport(report: VerifyReport): string[] {
  const version =
    report.version === null ? dialectName(report.dialect) : report.migratesTo === null ? `v${report.version}` : `v${report.version}, migrates to v${report.migratesTo} on load`;
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const facts = `${version}, ${count(report.entries, "entry", "entries")}, ${count(report.blobRefs, "blob ref", "blob refs")}`;
  if (report.problems.length === 0) return [`${report.file}: OK (${facts})`];
  return [
    `${report.file}: ${count(report.problems.length, "problem", "problems")} (${facts})`,
    ...report.problems.map((p) => `  line ${p.line}${p.entryId ? `, entry ${p.entryId}` : ""}: ${p.kind}: ${p.message}`),
  ];
}
