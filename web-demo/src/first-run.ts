/**
 * The first time the viewer opens an empty store it imports a bundled sample (a session pi
 * itself wrote, see web-demo/scripts/build-sample.ts), so there is something to look at. A marker
 * in the store records that this happened: a user who deletes the sample does not get it back.
 */
import { importSessionFiles, type ImportSummary } from "../../src/archive/import.js";
import { SessionManager } from "../../src/session/session-manager.js";
import type { StoragePort } from "../../src/port.js";
import sampleSession from "./samples/pi-sample.jsonl?raw";

const SAMPLE_FILE_NAME = "pi-sample.jsonl";
export const SAMPLE_SESSION: string = sampleSession;

/** Outside sessions/: listings never see it. */
export const FIRST_RUN_MARKER = "viewer/first-run-done";

/** Imports the sample into an empty store on its first run; null when it was not the first run or the store was not empty. */
export async function importSampleOnFirstRun(storage: StoragePort): Promise<ImportSummary | null> {
  if (await storage.stat(FIRST_RUN_MARKER)) return null;
  let summary: ImportSummary | null = null;
  if ((await SessionManager.listAll(storage)).length === 0) {
    summary = await importSessionFiles(storage, [{ name: SAMPLE_FILE_NAME, bytes: new TextEncoder().encode(SAMPLE_SESSION) }], { onConflict: "auto" });
  }
  await storage.write(FIRST_RUN_MARKER, new TextEncoder().encode(new Date().toISOString()));
  return summary;
}
