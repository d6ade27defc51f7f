/**
 * SessionManager over a real StoragePort: what a session must survive on every backend, in Node
 * and in a real browser alike. So it uses only universal APIs (Uint8Array, TextEncoder,
 * crypto.subtle), never node:* or Buffer.
 *
 * Each test gets storage of its own from `makeStorage` (a fresh directory or database).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BLOB_REF_PREFIX, sha256Hex } from "../../src/blobs/blob-store.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { SessionManager, isSessionError, isStorageError, type AgentMessage, type SessionErrorCode, type SessionInfo, type StoragePort, type StoreLayout } from "../../src/index.js";
import { base64ToBytes, bytesToBase64 } from "../../src/blobs/base64.js";
import { decodeRecord, detectDialect } from "../../src/format/dialect.js";
import { encodeJsonl } from "../../src/format/session-file.js";
import { joinPath, parentDir } from "../../src/port.js";
import { storeSessionDir } from "../../src/session/paths.js";
import { storeImageForm } from "../../src/session/store-owner.js";
import { assistantMsg, userMsg } from "./messages.js";

export interface StorageUnderTest {
  storage: StoragePort;
  /**
   * Closes `storage` (and everything behind it: a worker, a connection) and returns a brand-new
   * port over the same place, as a new page or process would open it. Only for persistent storage.
   */
  reopen?: () => Promise<StoragePort>;
  /** A second live port over the same place, as another tab or process holds one. Only for persistent storage. */
  openSecond?: () => Promise<StoragePort>;
  /** Releases whatever makeStorage, reopen and openSecond created; runs after each test. */
  cleanup?: () => Promise<void>;
}

export interface SessionSuiteOptions {
  /** The port implements acquireLock (every adapter does; a bare port may not). Default true. */
  locks?: boolean;
  /** Sessions outlive the port: makeStorage provides `reopen` and `openSecond`. Default false (memory). */
  persistent?: boolean;
  /** The store's layout, so its dialect: new sessions are written in it. Default "pi". */
  layout?: StoreLayout;
}

const CWD = "/work/app";
const OTHER_CWD = "/work/other";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Deterministic pseudo-random bytes, so base64 lengths and hashes are fixed. */
function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

function userWithImages(text: string, images: Uint8Array[]): AgentMessage {
  return {
    role: "user",
    content: [{ type: "text", text }, ...images.map((bytes) => ({ type: "image", data: bytesToBase64(bytes), mimeType: "image/png" }))],
    timestamp: Date.now(),
  };
}

function assistantCallingTool(callId: string): AgentMessage {
  const message = assistantMsg("taking a screenshot");
  return { ...message, content: [...message.content, { type: "toolCall", id: callId, name: "screenshot", arguments: {} }], stopReason: "toolUse" };
}

function toolResultWithImage(callId: string, image: Uint8Array): AgentMessage {
  return {
    role: "toolResult",
    toolCallId: callId,
    toolName: "screenshot",
    content: [
      { type: "text", text: "screenshot taken" },
      { type: "image", data: bytesToBase64(image), mimeType: "image/png" },
    ],
    isError: false,
    timestamp: Date.now(),
  };
}

/**
 * The file's records, decoded from the dialect its header declares (canonical: `type: "session"`,
 * `parentId`); fails unless every line is complete JSON ending in "\n".
 */
async function readJsonl(storage: StoragePort, path: string): Promise<Record<string, unknown>[]> {
  const bytes = await storage.read(path);
  expect(bytes, `${path} exists`).not.toBeNull();
  const text = decoder.decode(bytes!);
  expect(text.endsWith("\n"), `${path} ends with a newline`).toBe(true);
  const raw = text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const dialect = detectDialect(raw[0]);
  expect(dialect, `${path} starts with a session header`).not.toBeNull();
  return raw.map((record) => decodeRecord(dialect!, record));
}

/** The error `fn` throws (synchronously). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

function expectSessionError(error: unknown, code: SessionErrorCode): void {
  expect(isSessionError(error, code), `SessionError "${code}", got ${String(error)}`).toBe(true);
}

/** Everything a reopened session must give back. */
function stateOf(sm: SessionManager) {
  return {
    header: sm.getHeader(),
    entries: sm.getEntries(),
    leafId: sm.getLeafId(),
    tree: sm.getTree(),
    context: sm.buildSessionContext(),
    sessionName: sm.getSessionName(),
  };
}

export function describeSessionManagerSuite(
  name: string,
  makeStorage: () => Promise<StorageUnderTest>,
  options: SessionSuiteOptions = {},
): void {
  const layout = options.layout ?? "pi";
  /** What a new session's header holds besides its id: pi's carries the version, seed 003's none. */
  const newHeaderFields = layout === "seed003" ? { type: "session" } : { type: "session", version: 3 };
  const dirOf = (cwd: string) => storeSessionDir(layout, cwd);
  describe(`SessionManager suite: ${name}`, () => {
    let under: StorageUnderTest;
    let storage: StoragePort;
    const opened: SessionManager[] = [];

    beforeEach(async () => {
      under = await makeStorage();
      storage = under.storage;
    });

    afterEach(async () => {
      for (const sm of opened.splice(0)) await sm.close().catch(() => {});
      await under.cleanup?.();
    });

    async function track(sm: Promise<SessionManager>): Promise<SessionManager> {
      const session = await sm;
      opened.push(session);
      return session;
    }

    const create = (cwd = CWD) => track(SessionManager.create(storage, cwd, { layout }));
    const list = (cwd: string) => SessionManager.list(storage, cwd, { layout });
    const open = (path: string, readOnly = false) => track(SessionManager.open(storage, path, { readOnly }));

    /** Opens the file of `sm` again (read-only, same port) and checks it gives back what `sm` holds. */
    async function expectReopensEqual(sm: SessionManager): Promise<SessionManager> {
      const reopened = await open(sm.getSessionFile()!, true);
      expect(stateOf(reopened)).toEqual(stateOf(sm));
      return reopened;
    }

    it("create, append user/assistant/toolResult with images, flush: large images in the store owner's form; reopening gives equal entries, tree and context", async () => {
      const big = pseudoRandomBytes(2000, 1); // 2,668 base64 chars: a blob
      const small = pseudoRandomBytes(100, 2); // 136 chars: stays inline
      const screenshot = pseudoRandomBytes(3000, 3);
      const sm = await create();
      sm.appendMessage(userWithImages("what is in these pictures?", [big, small]));
      sm.appendMessage(assistantCallingTool("call_1"));
      sm.appendMessage(toolResultWithImage("call_1", screenshot));
      sm.appendMessage(assistantMsg("a cat, a dot and a screen"));
      await sm.flush();

      const path = sm.getSessionFile()!;
      expect(path.startsWith(`${dirOf(CWD)}/`)).toBe(true);
      const records = await readJsonl(storage, path);
      expect(records.map((r) => r.type)).toEqual(["session", "message", "message", "message", "message"]);
      // Blob refs in sessionkit's own stores (memory, IndexedDB, OPFS); inline in an agent's (pi's, on files).
      const refs = storeImageForm(sm.getOwner()) === "blob-refs";
      for (const [bytes, line] of [
        [big, 1],
        [screenshot, 3],
      ] as const) {
        const hash = await sha256Hex(bytes);
        const lineText = JSON.stringify(records[line]);
        if (refs) {
          expect(await storage.read(`blobs/${hash}`), `blobs/${hash}`).toEqual(bytes);
          expect(lineText).toContain(`"${BLOB_REF_PREFIX}${hash}"`);
          expect(lineText).not.toContain(bytesToBase64(bytes));
        } else {
          expect(lineText).toContain(bytesToBase64(bytes));
          expect(lineText).not.toContain(BLOB_REF_PREFIX);
        }
      }
      expect(JSON.stringify(records[1])).toContain(bytesToBase64(small));
      const blobs = refs ? [await sha256Hex(big), await sha256Hex(screenshot)].sort() : [];
      expect((await storage.list("blobs")).map((entry) => entry.name).sort()).toEqual(blobs);

      await sm.close();
      const reopened = await open(path);
      expect(stateOf(reopened)).toEqual(stateOf(sm));
      const firstContent = (reopened.buildSessionContext().messages[0]!.content as { data?: string }[]).map((block) => block.data);
      expect(firstContent).toEqual([undefined, bytesToBase64(big), bytesToBase64(small)]);
    });

    it("writes nothing until the first assistant message, then the header and every entry", async () => {
      const sm = await create();
      const path = sm.getSessionFile()!;
      const ids = [sm.appendMessage(userMsg("hello")), sm.appendThinkingLevelChange("high"), sm.appendModelChange("anthropic", "claude")];
      await sm.flush();
      expect(await storage.stat(path)).toBeNull();
      expect((await storage.list(parentDir(path))).filter((entry) => entry.name.endsWith(".jsonl"))).toEqual([]);

      ids.push(sm.appendMessage(assistantMsg("hi")));
      await sm.flush();
      const records = await readJsonl(storage, path);
      expect(records[0]).toMatchObject({ ...newHeaderFields, id: sm.getSessionId(), cwd: CWD });
      expect(records.slice(1).map((r) => r.id)).toEqual(ids);

      ids.push(sm.appendMessage(userMsg("and then?")));
      await sm.flush();
      expect((await readJsonl(storage, path)).slice(1).map((r) => r.id)).toEqual(ids);
      // Written in the store's dialect, every line.
      const lines = decoder.decode((await storage.read(path))!).trimEnd().split("\n");
      expect(JSON.parse(lines[0]!).type).toBe(layout === "seed003" ? "session_header" : "session");
      for (const line of lines.slice(1)) expect(Object.keys(JSON.parse(line))).toContain(layout === "seed003" ? "parent_id" : "parentId");
    });

    it("branches, branch summaries, labels, the session name and compaction are persisted and reloaded", async () => {
      const sm = await create();
      const u1 = sm.appendMessage(userMsg("first question"));
      const a1 = sm.appendMessage(assistantMsg("first answer"));
      const u2 = sm.appendMessage(userMsg("second question"));
      sm.appendMessage(assistantMsg("second answer"));
      sm.branch(a1);
      const u3 = sm.appendMessage(userMsg("another way"));
      sm.appendMessage(assistantMsg("another answer"));
      sm.branchWithSummary(u1, "tried two ways", { files: ["a.ts"] });
      const afterSummary = sm.appendMessage(assistantMsg("after the summary"));
      sm.appendLabelChange(a1, "checkpoint");
      sm.appendLabelChange(u3, "dead end");
      sm.appendLabelChange(u3, undefined); // cleared: no label on reload
      sm.appendSessionInfo("  tree session  ");
      sm.appendCompaction("compacted so far", afterSummary, 12_345);
      sm.appendMessage(userMsg("after compaction"));
      sm.appendMessage(assistantMsg("still here"));
      await sm.flush();

      const reopened = await expectReopensEqual(sm);
      expect(reopened.getLabel(a1)).toBe("checkpoint");
      expect(reopened.getLabel(u3)).toBeUndefined();
      expect(reopened.getSessionName()).toBe("tree session");
      expect(reopened.getTree()).toHaveLength(1);
      expect(reopened.getChildren(a1).map((entry) => entry.id)).toEqual([u2, u3]);
      const context = reopened.buildSessionContext();
      expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: "compacted so far", tokensBefore: 12_345 });
      // The summary, then the path from the first kept entry (labels and the name add nothing).
      expect(context.messages.map((message) => message.role)).toEqual(["compactionSummary", "assistant", "user", "assistant"]);
    });

    it("createBranchedSession is persisted with exactly one header and the path's labels re-emitted", async () => {
      const sm = await create();
      const u1 = sm.appendMessage(userMsg("one"));
      const a1 = sm.appendMessage(assistantMsg("one"));
      const u2 = sm.appendMessage(userMsg("two"));
      const a2 = sm.appendMessage(assistantMsg("two"));
      sm.appendLabelChange(u1, "start");
      sm.appendLabelChange(u2, "below the branch point"); // not on the root → a1 path: dropped
      sm.branch(a1);
      sm.appendMessage(userMsg("sideways"));
      await sm.flush();
      const sourcePath = sm.getSessionFile()!;
      const sourceBefore = await storage.read(sourcePath);

      const branchedPath = sm.createBranchedSession(a1)!;
      await sm.flush();
      expect(branchedPath).not.toBe(sourcePath);
      const records = await readJsonl(storage, branchedPath);
      expect(records.filter((r) => r.type === "session")).toHaveLength(1);
      expect(records[0]).toMatchObject({ type: "session", parentSession: sourcePath });
      expect(records.slice(1).filter((r) => r.type !== "label").map((r) => r.id)).toEqual([u1, a1]);
      expect(records.filter((r) => r.type === "label").map((r) => [r.targetId, r.label])).toEqual([[u1, "start"]]);
      expect(records.some((r) => r.id === a2 || r.id === u2)).toBe(false);
      expect(await storage.read(sourcePath)).toEqual(sourceBefore);

      sm.appendMessage(userMsg("continuing on the branch"));
      await sm.flush();
      const reopened = await expectReopensEqual(sm);
      expect(reopened.getLabel(u1)).toBe("start");
      expect(reopened.getHeader()!.parentSession).toBe(sourcePath);
    });

    /**
     * Two writers on one session: the second (on `secondStorage`) gets "locked" or a read-only
     * view, never interleaved lines; once the first closes, the second writes.
     */
    async function expectOneWriterAtATime(secondStorage: StoragePort): Promise<void> {
      const first = await create();
      first.appendMessage(userMsg("mine"));
      first.appendMessage(assistantMsg("yours"));
      await first.flush();
      const path = first.getSessionFile()!;

      const refused = await SessionManager.open(secondStorage, path).then(
        (sm) => (opened.push(sm), null),
        (error: unknown) => error,
      );
      expect(isStorageError(refused, "locked"), `StorageError "locked", got ${String(refused)}`).toBe(true);

      const viewer = await track(SessionManager.open(secondStorage, path, { readOnly: true }));
      expect(viewer.isReadOnly()).toBe(true);
      expect(viewer.getEntries()).toEqual(first.getEntries());
      expectSessionError(
        thrownBy(() => viewer.appendMessage(userMsg("intruder"))),
        "read-only",
      );

      first.appendMessage(userMsg("still mine"));
      await first.close();
      const second = await track(SessionManager.open(secondStorage, path));
      expect(second.getEntries()).toEqual(first.getEntries());
      second.appendMessage(assistantMsg("now mine"));
      await second.close();

      for (const port of new Set([storage, secondStorage])) {
        const records = await readJsonl(port, path);
        expect(records.filter((r) => r.type === "session")).toHaveLength(1);
        expect(records.slice(1).map((r) => r.id)).toEqual(second.getEntries().map((entry) => entry.id));
        expect(records).toHaveLength(5);
      }
    }

    if (options.locks ?? true) {
      it("a second writer gets 'locked', readOnly opens a view whose appends throw, and after the first closes the second writes", async () => {
        await expectOneWriterAtATime(storage);
      });
    }

    if ((options.locks ?? true) && options.persistent) {
      it("the same through a second live port over the same place (another tab or process)", async () => {
        expect(under.openSecond, "a persistent storage under test provides openSecond").toBeDefined();
        await expectOneWriterAtATime(await under.openSecond!());
      });
    }

    it("a torn last line is cut off before the next append and its bytes kept in a side file", async () => {
      const sm = await create();
      sm.appendMessage(userMsg("before the crash"));
      sm.appendMessage(assistantMsg("ok"));
      await sm.close();
      const path = sm.getSessionFile()!;
      const intact = (await storage.read(path))!;

      const line = encodeJsonl([{ type: "message", id: "0badf00d", parentId: sm.getLeafId(), timestamp: new Date().toISOString(), message: userMsg("lost") }]);
      const torn = line.slice(0, line.length >> 1);
      await storage.append(path, torn);

      const reopened = await open(path);
      expect(reopened.getEntries()).toEqual(sm.getEntries());
      expect(reopened.getLoadProblems().map((problem) => problem.kind)).toEqual(["torn"]);
      const next = reopened.appendMessage(userMsg("after the crash"));
      await reopened.flush();

      const bytes = (await storage.read(path))!;
      expect(bytes.slice(0, intact.length)).toEqual(intact);
      const records = await readJsonl(storage, path);
      expect(records.map((r) => r.id)).toEqual([sm.getSessionId(), ...sm.getEntries().map((entry) => entry.id), next]);
      const base = path.slice(path.lastIndexOf("/") + 1);
      const sideFiles = (await storage.list(parentDir(path))).filter((entry) => entry.name.startsWith(`${base}.torn-`));
      expect(sideFiles).toHaveLength(1);
      expect(await storage.read(joinPath(parentDir(path), sideFiles[0]!.name))).toEqual(torn);
    });

    it("a file that is not a session is refused with 'not-a-session' and left byte for byte", async () => {
      const dir = dirOf(CWD);
      const notSessions = {
        [`${dir}/notes.jsonl`]: encoder.encode('{"type":"note","text":"keep me"}\n{"type":"note","text":"and me"}\n'),
        [`${dir}/readme.jsonl`]: encoder.encode("# not JSON at all\n"),
      };
      for (const [path, bytes] of Object.entries(notSessions)) {
        await storage.write(path, bytes);
        const error = await SessionManager.open(storage, path).then(
          (sm) => (opened.push(sm), null),
          (caught: unknown) => caught,
        );
        expectSessionError(error, "not-a-session");
        expect(await storage.read(path), path).toEqual(bytes);
      }
      expect((await storage.list(dir)).map((entry) => entry.name).sort()).toEqual(["notes.jsonl", "readme.jsonl"]);
    });

    it("list and listAll through the catalog: a second call equals the first, an append shows in the next", async () => {
      const alpha = await create();
      alpha.appendMessage(userMsg("alpha question"));
      alpha.appendMessage(assistantMsg("alpha answer"));
      alpha.appendSessionInfo("alpha");
      const beta = await create();
      beta.appendMessage(userMsg("beta question"));
      beta.appendMessage(assistantMsg("beta answer"));
      beta.appendMessage(userMsg("beta again"));
      const gamma = await create(OTHER_CWD);
      gamma.appendMessage(userMsg("gamma question"));
      gamma.appendMessage(assistantMsg("gamma answer"));
      await Promise.all([alpha.flush(), beta.flush(), gamma.flush()]);

      const summary = (infos: SessionInfo[]) =>
        Object.fromEntries(infos.map((info) => [info.id, { messageCount: info.messageCount, firstMessage: info.firstMessage, name: info.name, cwd: info.cwd, path: info.path }]));
      const first = await list(CWD);
      expect(summary(first)).toEqual({
        [alpha.getSessionId()]: { messageCount: 2, firstMessage: "alpha question", name: "alpha", cwd: CWD, path: alpha.getSessionFile() },
        [beta.getSessionId()]: { messageCount: 3, firstMessage: "beta question", name: undefined, cwd: CWD, path: beta.getSessionFile() },
      });
      expect((await storage.list(CATALOG_DIR)).length).toBeGreaterThan(0);
      expect(await list(CWD)).toEqual(first);

      const all = await SessionManager.listAll(storage);
      expect(all.map((info) => info.id).sort()).toEqual([alpha, beta, gamma].map((sm) => sm.getSessionId()).sort());
      expect(await SessionManager.listAll(storage)).toEqual(all);

      // A minute later, so the order does not hang on the clock's millisecond.
      alpha.appendMessage({ ...userMsg("alpha follow-up"), timestamp: Date.now() + 60_000 });
      await alpha.flush();
      const after = await list(CWD);
      expect(summary(after)[alpha.getSessionId()]!.messageCount).toBe(3);
      expect(summary(after)[beta.getSessionId()]).toEqual(summary(first)[beta.getSessionId()]);
      expect(after[0]!.id).toBe(alpha.getSessionId()); // the most recently modified comes first
      const allAfter = await SessionManager.listAll(storage);
      expect(allAfter.find((info) => info.id === alpha.getSessionId())!.messageCount).toBe(3);
      expect(allAfter.find((info) => info.id === gamma.getSessionId())).toEqual(all.find((info) => info.id === gamma.getSessionId()));
    });

    it("a v1 file is migrated to v3 on open and rewritten, with no backup left", async () => {
      const dir = dirOf(CWD); // a pi file keeps pi's dialect in any store
      const path = `${dir}/2025-01-01T00-00-00-000Z_legacy-session.jsonl`;
      const timestamp = "2025-01-01T00:00:00.000Z";
      const v1 = [
        { type: "session", id: "legacy-session", timestamp, cwd: CWD },
        { type: "message", timestamp, message: { role: "user", content: "old question", timestamp: 1 } },
        { type: "message", timestamp, message: { role: "assistant", content: [{ type: "text", text: "old answer" }], timestamp: 2 } },
        { type: "thinking_level_change", timestamp, thinkingLevel: "low" },
        { type: "message", timestamp, message: { role: "user", content: "kept question", timestamp: 3 } },
        { type: "compaction", timestamp, summary: "the old part", firstKeptEntryIndex: 4, tokensBefore: 500 },
        { type: "message", timestamp, message: { role: "hookMessage", content: "from a hook", timestamp: 4 } },
      ];
      await storage.write(path, encodeJsonl(v1));

      const sm = await open(path);
      expect(sm.getMigratedFrom()).toBe(1);
      const entries = sm.getEntries();
      expect(entries.map((entry) => entry.parentId)).toEqual([null, ...entries.slice(0, -1).map((entry) => entry.id)]);
      expect(entries.every((entry) => /^[0-9a-f]{8}$/.test(entry.id))).toBe(true);
      expect(entries[4]).toMatchObject({ type: "compaction", firstKeptEntryId: entries[3]!.id });
      expect(entries[4]).not.toHaveProperty("firstKeptEntryIndex");
      expect(entries[5]).toMatchObject({ message: { role: "custom" } });

      const records = await readJsonl(storage, path);
      expect(records[0]).toMatchObject({ type: "session", version: 3, id: "legacy-session" });
      expect(records.slice(1)).toEqual(JSON.parse(JSON.stringify(entries)));
      expect((await storage.list(dir)).map((entry) => entry.name).filter((name) => name.includes(".bak"))).toEqual([]);

      await sm.close();
      const reopened = await open(path);
      expect(reopened.getMigratedFrom()).toBeNull();
      expect(stateOf(reopened)).toEqual(stateOf(sm));
    });

    it("1,000 appends with a flush every 4 entries reopen equal", async () => {
      const sm = await create();
      for (let i = 0; i < 1000; i++) {
        sm.appendMessage(i % 2 === 0 ? userMsg(`question ${i}`) : assistantMsg(`answer ${i}`));
        if (i % 4 === 3) await sm.flush();
      }
      await sm.close();
      const records = await readJsonl(storage, sm.getSessionFile()!);
      expect(records).toHaveLength(1001);
      const reopened = await open(sm.getSessionFile()!);
      expect(stateOf(reopened)).toEqual(stateOf(sm));
      expect(reopened.getEntries()).toHaveLength(1000);
    });

    if (options.persistent) {
      it("a brand-new port over the same place sees the same sessions (reopen after reload)", async () => {
        const image = pseudoRandomBytes(4000, 9);
        const sm = await create();
        sm.appendMessage(userWithImages("remember this", [image]));
        sm.appendMessage(assistantMsg("remembered"));
        sm.appendLabelChange(sm.getLeafId()!, "saved");
        await sm.close();
        const listedBefore = await list(CWD);

        expect(under.reopen, "a persistent storage under test provides reopen").toBeDefined();
        storage = await under.reopen!();
        expect(await list(CWD)).toEqual(listedBefore);
        expect(await SessionManager.listAll(storage)).toEqual(listedBefore);
        const reopened = await open(sm.getSessionFile()!);
        expect(stateOf(reopened)).toEqual(stateOf(sm));
        const content = reopened.buildSessionContext().messages[0]!.content as { data?: string }[];
        expect(base64ToBytes(content[1]!.data!)).toEqual(image);
        // The new port writes where the old one did.
        reopened.appendMessage(userMsg("after the reload"));
        await reopened.flush();
        expect((await readJsonl(storage, sm.getSessionFile()!)).length).toBe(1 + sm.getEntries().length + 1);
      });
    }
  });
}
