/**
 * Files picked or dropped by the user: `.jsonl` files are imported as one batch
 * (importSessionFiles: all or nothing), each `.zip` as an archive; every unit reports on its own,
 * so one bad archive does not hide what the others did.
 */
import { importArchive, importSessionFiles } from "../../src/archive/import.js";
import type { StoragePort } from "../../src/port.js";
import type { ImportUnitResult } from "./render/import-report.js";

export class UnsupportedFilesError extends Error {
  override readonly name = "UnsupportedFilesError";
  constructor(readonly names: string[]) {
    super(`Not a session file or archive: ${names.join(", ")} (expected .jsonl or .zip)`);
  }
}

const extensionOf = (name: string) => name.slice(name.lastIndexOf(".") + 1).toLowerCase();

/** Imports `files`; throws UnsupportedFilesError, importing nothing, when one is neither .jsonl nor .zip. */
export async function importFiles(storage: StoragePort, files: readonly File[]): Promise<ImportUnitResult[]> {
  const jsonl = files.filter((f) => extensionOf(f.name) === "jsonl");
  const zips = files.filter((f) => extensionOf(f.name) === "zip");
  const unsupported = files.filter((f) => !jsonl.includes(f) && !zips.includes(f)).map((f) => f.name);
  if (unsupported.length > 0) throw new UnsupportedFilesError(unsupported);

  const results: ImportUnitResult[] = [];
  if (jsonl.length > 0) {
    const names = jsonl.map((f) => f.name);
    try {
      const inputs = await Promise.all(jsonl.map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
      results.push({ files: names, summary: await importSessionFiles(storage, inputs, { onConflict: "auto" }) });
    } catch (error) {
      results.push({ files: names, error });
    }
  }
  for (const zip of zips) {
    try {
      results.push({ files: [zip.name], summary: await importArchive(storage, zip, { onConflict: "auto" }) });
    } catch (error) {
      results.push({ files: [zip.name], error });
    }
  }
  return results;
}
