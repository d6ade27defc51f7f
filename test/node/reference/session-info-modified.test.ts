/**
 * pi's test/session-info-modified-timestamp.test.ts: `SessionInfo.modified` is the latest
 * user/assistant message time, not the file's mtime. Real files through `nodeFsStorage`.
 *
 * Not ported:
 * - pi's session-selector-search.test.ts (6 cases): `filterAndSortSessions` is the /resume
 *   picker's search, not part of our API.
 * - pi's session-selector-rename.test.ts and session-selector-path-delete.test.ts: TUI tests.
 * - omp's "discovery prefix" (section C 11): omp's header-title listing (`fullName`, names cut to
 *   39 chars + "…"); our listing returns pi's SessionInfo, which has neither.
 */
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { SessionManager } from "../../../src/index.js";
import { assistantMsg } from "../../shared/messages.js";

const DIR = "sessions/--tmp--";
const FILE = `${DIR}/test-session.jsonl`;

let root: string;
let storage: NodeFsStorage;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-modified-"));
  storage = nodeFsStorage({ root });
});

afterEach(async () => {
  await storage.close();
  await rm(root, { recursive: true, force: true });
});

/** pi's helper: a v3 header dated 1970, then `open` and one assistant message. */
async function createSessionFile(path: string): Promise<void> {
  const header = { type: "session", id: "test-session", version: 3, timestamp: new Date(0).toISOString(), cwd: "/tmp" };
  await mkdir(join(root, DIR), { recursive: true });
  await writeFile(join(root, path), `${JSON.stringify(header)}\n`);
  const sm = await SessionManager.open(storage, path);
  sm.appendMessage(assistantMsg("hi"));
  await sm.close();
}

describe("SessionInfo.modified", () => {
  it("uses last user/assistant message timestamp instead of file mtime", async () => {
    await createSessionFile(FILE);
    const before = await stat(join(root, FILE));
    await new Promise((resolve) => setTimeout(resolve, 10));

    const sm = await SessionManager.open(storage, FILE);
    const msgTime = Date.now();
    sm.appendMessage({ ...assistantMsg("later"), timestamp: msgTime });
    await sm.close();

    // An mtime an hour away from every message: the listing must not use it.
    const farMtime = new Date(msgTime + 3_600_000);
    await utimes(join(root, FILE), farMtime, farMtime);

    const sessions = await SessionManager.list(storage, "/tmp", { sessionDir: DIR });
    const info = sessions.find((s) => s.path === FILE);
    expect(info).toBeDefined();
    expect(info!.modified.getTime()).toBe(msgTime);
    expect(info!.modified.getTime()).not.toBe(before.mtime.getTime());
    expect(info!.created.getTime()).toBe(0);
    expect(info!.messageCount).toBe(2);
  });
});
