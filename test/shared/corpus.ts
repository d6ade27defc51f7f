/** The shared corpus of real session files and what pi computes for each (Node only). */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../../shared/corpus");

/** Files with a torn write that glued two objects on one line; pi drops that line. */
export const GLUED_FILES = new Set(["badlogic__pi-mono/session.jsonl", "badlogic__pi-mono/compact.jsonl"]);

export interface PiReference {
  headerVersion: number;
  entries: number;
  entryTypes: Record<string, number>;
  leafType: string | null;
  treeRoots: number;
  treeNodes: number;
  branchLength: number;
  context: { messages: number; roles: Record<string, number>; thinkingLevel: string; model: unknown };
  sessionName: string | null;
  listInfo: { messageCount: number; firstMessage: string; name: string | null; cwd: string } | undefined;
}

export function loadPiReference(): { generatedBy: string; files: Record<string, PiReference> } {
  return JSON.parse(readFileSync(join(CORPUS_DIR, "pi-reference.json"), "utf8"));
}
