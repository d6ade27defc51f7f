/** The shared corpus of real session files and what pi computes for each (Node only). */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CORPUS_DIR_FROM_PROJECT_ROOT, PI_REFERENCE_NAME, type PiReferenceFile } from "./corpus-observe.js";

export { GLUED_FILES } from "./corpus-observe.js";

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
export const CORPUS_DIR = join(PROJECT_ROOT, CORPUS_DIR_FROM_PROJECT_ROOT);

export function loadPiReference(): PiReferenceFile {
  return JSON.parse(readFileSync(join(CORPUS_DIR, PI_REFERENCE_NAME), "utf8"));
}
