/**
 * The corpus contract, for Node and the browser alike (no node:*, no Buffer): what we compute for
 * each real session file, in the shape of pi-reference.json, and the checks against pi's figures.
 * Every figure is a contract, except that we recover the two glued lines pi drops.
 */
import { describe, expect, it } from "vitest";
import { readSessionFile } from "../../src/format/session-file.js";
import { SessionManager, type SessionManagerOptions, type SessionTreeNode, type StoragePort } from "../../src/index.js";

/** How SessionManager reads a file: lazily (the default) or every line at open. */
export type ParseMode = NonNullable<SessionManagerOptions["parse"]>;
export const PARSE_MODES: readonly ParseMode[] = ["lazy", "full"];

/** The corpus directory relative to the project root (copied from the real files; see its README). */
export const CORPUS_DIR_FROM_PROJECT_ROOT = "test/fixtures/corpus";
export const PI_REFERENCE_NAME = "pi-reference.json";

/** Files with a torn write that glued two objects on one line; pi drops that line. */
export const GLUED_FILES: ReadonlySet<string> = new Set(["badlogic__pi-mono/session.jsonl", "badlogic__pi-mono/compact.jsonl"]);

interface PiReference {
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

/** pi-reference.json: what pi 0.73.1 computes for each corpus file, keyed by its corpus path. */
export interface PiReferenceFile {
  generatedBy: string;
  files: Record<string, PiReference>;
}

function countNodes(nodes: SessionTreeNode[]): number {
  let n = 0;
  const stack = [...nodes];
  while (stack.length) {
    const node = stack.pop()!;
    n++;
    stack.push(...node.children);
  }
  return n;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

/** What we compute for the session file `file` of `storage`, in the shape of pi-reference.json. */
async function observeSession(storage: StoragePort, file: string, parse?: ParseMode): Promise<PiReference> {
  const sm = await SessionManager.open(storage, file, { parse });
  try {
    const entries = sm.getEntries();
    const context = sm.buildSessionContext();
    const dir = file.slice(0, file.lastIndexOf("/"));
    const infos = await SessionManager.list(storage, "", { sessionDir: dir });
    const info = infos.find((i) => i.path === file);
    return {
      headerVersion: sm.getHeader()!.version!,
      entries: entries.length,
      entryTypes: countBy(entries, (e) => e.type),
      leafType: sm.getLeafEntry()?.type ?? null,
      treeRoots: sm.getTree().length,
      treeNodes: countNodes(sm.getTree()),
      branchLength: sm.getBranch().length,
      context: {
        messages: context.messages.length,
        roles: countBy(context.messages, (m) => m.role),
        thinkingLevel: context.thinkingLevel,
        model: JSON.parse(JSON.stringify(context.model)),
      },
      sessionName: sm.getSessionName() ?? null,
      listInfo: info && {
        messageCount: info.messageCount,
        // pi-reference.json keeps the first 80 characters of firstMessage.
        firstMessage: info.firstMessage.slice(0, 80),
        name: info.name ?? null,
        cwd: info.cwd,
      },
    };
  } finally {
    await sm.close();
  }
}

/**
 * Registers the corpus tests against pi's figures. `getStorage` gives a port that holds every
 * corpus file at its corpus path (e.g. "badlogic__pi-mono/session.jsonl"), ready when the tests
 * run; opening may migrate and rewrite files, so it must be a copy. `parse` is how SessionManager
 * reads them (its default when not given).
 */
export function describeCorpusMatchesPi(name: string, reference: PiReferenceFile, getStorage: () => StoragePort, parse?: ParseMode): void {
  const files = Object.keys(reference.files);
  if (parse) name = `${name}, parse: ${parse}`;

  describe(`corpus (${name}): every real session file matches pi`, () => {
    for (const file of files.filter((f) => !GLUED_FILES.has(f))) {
      it(file, async () => {
        const expected = reference.files[file]!;
        const observed = await observeSession(getStorage(), file, parse);
        expect(observed.listInfo, "listed").toBeDefined();
        // The figures pi computed; key order of the count maps does not matter.
        expect(observed).toEqual(expected);
      });
    }
  });

  describe(`corpus (${name}): glued lines are recovered where pi drops them`, () => {
    for (const file of GLUED_FILES) {
      it(file, async () => {
        const expected = reference.files[file]!;
        const loaded = await readSessionFile(getStorage(), file);
        expect(loaded.kind).toBe("session");
        if (loaded.kind !== "session") return;
        const glued = loaded.problems.filter((p) => p.kind === "glued");
        expect(glued).toHaveLength(1);
        const observed = await observeSession(getStorage(), file, parse);
        // pi drops the one glued line: both objects on it are extra here.
        expect(observed.entries).toBe(expected.entries + 2);
        for (const [type, count] of Object.entries(expected.entryTypes)) {
          expect(observed.entryTypes[type], type).toBeGreaterThanOrEqual(count);
        }
        expect(observed.treeRoots).toBe(1);
        expect(observed.context.thinkingLevel).toBe(expected.context.thinkingLevel);
        expect(observed.context.model).toEqual(expected.context.model);
        expect(observed.listInfo!.cwd).toBe(expected.listInfo!.cwd);
        expect(observed.listInfo!.firstMessage).toBe(expected.listInfo!.firstMessage);
        expect(observed.listInfo!.messageCount).toBeGreaterThan(expected.listInfo!.messageCount);
      });
    }
  });
}
