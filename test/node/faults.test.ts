/**
 * Fault injection: a scripted session runs once for every storage operation it performs, with
 * that one operation failing. The failure must surface as a typed error (SessionError
 * "persist-failed", latched, or the StorageError itself when opening), and what is left in
 * storage must reopen to a prefix of the session, never a damaged file. A failing step of a
 * migration rewrite must leave the original file complete, in place or in its backup.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryStorage, type MemoryStorage } from "../../adapters/memory/index.js";
import {
  isSessionError,
  SessionError,
  SessionManager,
  type AgentMessage,
  type SessionEntry,
  type SessionHeader,
  type StoragePort,
} from "../../src/index.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { faultyPort, type FaultyPort } from "../shared/faulty-port.js";

/** The script's store is sessionkit's own (its images go to blobs/): the wrapped port's kind names no store kind. */
const OWN_STORE = { owner: "sessionkit" } as const;

const CWD = "/work/app";

function user(text: string, images: string[] = []): AgentMessage {
  const content = images.length === 0 ? text : [{ type: "text", text }, ...images.map((data) => ({ type: "image", data, mimeType: "image/png" }))];
  return { role: "user", content, timestamp: 1_700_000_000_000 };
}

function assistant(text: string): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-test",
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: 1_700_000_000_001,
  };
}

/** Deterministic base64 of `bytes` bytes: ≥ 1024 chars for bytes ≥ 768, so it goes to the blob store. */
function image(bytes: number, salt: number): string {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 31 + salt * 17) & 0xff;
  return Buffer.from(data).toString("base64");
}

const IMAGE_A = image(1500, 1);
const IMAGE_B = image(900, 2);

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

interface ScriptRun {
  path: string | undefined;
  header: SessionHeader | undefined;
  /** Every entry the script created, in order, as held in memory. */
  entries: SessionEntry[];
  /** Entries acknowledged by a flush or close that resolved: they must be in the file. */
  durable: number;
  /** What session 2 loaded from the file session 1 wrote (fault-free session 1 only). */
  reopened: SessionEntry[] | undefined;
  failure: unknown;
  failedStep: string | undefined;
  failedWhileOpening: boolean;
  /** Steps after the failure that did not rethrow the very same error object. */
  latchViolations: string[];
}

interface Step {
  name: string;
  /** create/open: a failure there throws the StorageError itself and ends the script. */
  opens?: boolean;
  /** flush/close: on success every entry so far is durable. */
  flushes?: boolean;
  /** Appends an entry and returns its id. */
  run: () => Promise<string | void> | string | void;
}

/**
 * create, user, assistant (first write), flush, more appends with blob images, a label, a branch
 * and a branch summary, flushes in between, close; then reopen, append and close again.
 */
async function runScript(storage: StoragePort): Promise<ScriptRun> {
  const run: ScriptRun = {
    path: undefined,
    header: undefined,
    entries: [],
    durable: 0,
    reopened: undefined,
    failure: undefined,
    failedStep: undefined,
    failedWhileOpening: false,
    latchViolations: [],
  };
  let sm: SessionManager | undefined;
  const session = () => sm!;
  const ids: Record<string, string> = {};
  const steps: Step[] = [
    {
      name: "create",
      opens: true,
      run: async () => {
        sm = await SessionManager.create(storage, CWD, OWN_STORE);
        run.path = sm.getSessionFile();
        run.header = sm.getHeader() ?? undefined;
      },
    },
    { name: "user message", run: () => (ids.firstUser = session().appendMessage(user("hello"))) },
    { name: "assistant message (first write)", run: () => (ids.firstAssistant = session().appendMessage(assistant("hi there"))) },
    { name: "flush 1", flushes: true, run: () => session().flush() },
    { name: "thinking level", run: () => session().appendThinkingLevelChange("high") },
    { name: "model change", run: () => session().appendModelChange("openai", "gpt-test") },
    { name: "user message with a blob image", run: () => session().appendMessage(user("look at this", [IMAGE_A])) },
    { name: "assistant message 2", run: () => session().appendMessage(assistant("a picture")) },
    { name: "flush 2", flushes: true, run: () => session().flush() },
    { name: "label", run: () => session().appendLabelChange(ids.firstUser!, "start") },
    {
      name: "branch + user message",
      run: () => {
        session().branch(ids.firstAssistant!);
        return session().appendMessage(user("another way"));
      },
    },
    { name: "branch with summary", run: () => session().branchWithSummary(ids.firstUser!, "tried another way", { files: ["a.ts"] }) },
    { name: "custom message with two images", run: () => session().appendCustomMessageEntry("note", [{ type: "text", text: "x" }, { type: "image", data: IMAGE_B, mimeType: "image/png" }, { type: "image", data: IMAGE_A, mimeType: "image/png" }], true) },
    { name: "flush 3", flushes: true, run: () => session().flush() },
    { name: "session name", run: () => session().appendSessionInfo("  fault script  ") },
    { name: "close", flushes: true, run: () => session().close() },
    {
      name: "reopen",
      opens: true,
      run: async () => {
        sm = await SessionManager.open(storage, run.path!, OWN_STORE);
        run.reopened = sm.getEntries();
      },
    },
    { name: "user message after reopen", run: () => session().appendMessage(user("back again", [IMAGE_A])) },
    { name: "assistant message after reopen", run: () => session().appendMessage(assistant("welcome back")) },
    { name: "close after reopen", flushes: true, run: () => session().close() },
  ];

  for (const step of steps) {
    if (run.failure !== undefined && step.opens) break; // the failed session ends the script
    const entriesBefore = run.entries.length;
    try {
      const id = await step.run();
      if (run.failure !== undefined) {
        run.latchViolations.push(`${step.name}: succeeded after the failure`);
        continue;
      }
      if (typeof id === "string") run.entries.push(session().getEntry(id)!);
      if (step.flushes) run.durable = entriesBefore;
    } catch (error) {
      if (run.failure === undefined) {
        run.failure = error;
        run.failedStep = step.name;
        run.failedWhileOpening = step.opens === true;
        if (step.opens) break;
      } else if (error !== run.failure) {
        run.latchViolations.push(`${step.name}: threw ${String(error)} instead of the latched error`);
      }
    }
  }
  return run;
}

/** "n:op path" per counted operation; the session file, whose name is random, as "<session>". */
function describeOperations(port: FaultyPort): string[] {
  return port.log.map((o) => `${o.n}:${o.op} ${o.path.replace(/^sessions\/--work-app--\/[^/]+\.jsonl/, "<session>")}`);
}

/** The fault-free run: how many operations the script performs, and which. */
async function measureBaseline(): Promise<{ run: ScriptRun; opLog: string[] }> {
  const port = faultyPort(memoryStorage());
  const run = await runScript(port);
  return { run, opLog: describeOperations(port) };
}

// Measured before the tests are declared, so there is one test per operation, no more.
const baseline = await measureBaseline();

describe("faults: the scripted session without faults", () => {
  it("runs clean, writes blobs, and reopens to every entry", () => {
    const { run, opLog } = baseline;
    expect(run.failure).toBeUndefined();
    expect(run.entries.map((e) => e.type)).toEqual([
      "message",
      "message",
      "thinking_level_change",
      "model_change",
      "message",
      "message",
      "label",
      "message",
      "branch_summary",
      "custom_message",
      "session_info",
      "message",
      "message",
    ]);
    expect(json(run.reopened)).toEqual(json(run.entries.slice(0, 11)));
    const ops = opLog.join("\n");
    expect(ops).toMatch(/write blobs\//); // the images went to the blob store
    expect(ops).toMatch(/sync <session>/);
    expect(ops).toMatch(/read blobs\//); // and were resolved on reopen
    expect(opLog.length).toBeGreaterThanOrEqual(15);
  });

  it("performs the same operations in the same order every time", async () => {
    // The sweep relies on the k-th operation being the same one in every run.
    expect((await measureBaseline()).opLog).toEqual(baseline.opLog);
  });
});

/** Reopens what the faulted run left, through the storage without faults. */
async function checkStoredPrefix(plain: MemoryStorage, run: ScriptRun): Promise<void> {
  if (run.path === undefined) {
    // create failed: nothing may have been written
    expect(await plain.list("sessions")).toEqual([]);
    return;
  }
  const stored = await plain.read(run.path);
  if (stored === null) {
    expect(run.durable, "a flush resolved, yet no file").toBe(0);
    return;
  }
  const text = new TextDecoder().decode(stored);
  expect(text.endsWith("\n"), "the file ends with a whole line").toBe(true);
  const reopened = await SessionManager.open(plain, run.path);
  expect(reopened.getLoadProblems()).toEqual([]);
  expect(json(reopened.getHeader())).toEqual(json(run.header));
  const entries = reopened.getEntries();
  expect(entries.length).toBeGreaterThanOrEqual(run.durable);
  expect(entries.length).toBeLessThanOrEqual(run.entries.length);
  expect(json(entries), "the file holds the first n entries of the run").toEqual(json(run.entries.slice(0, entries.length)));
  // The session is usable again after the fault.
  reopened.appendMessage(user("after the fault"));
  await reopened.close();
  const again = await SessionManager.open(plain, run.path, { readOnly: true });
  expect(again.getEntries()).toHaveLength(entries.length + 1);
  await again.close();
}

function checkSurfacedFailure(port: FaultyPort, run: ScriptRun): void {
  expect(port.injected, "the k-th operation was reached").toBeDefined();
  expect(run.failure, `the fault in ${port.injected?.message} surfaced`).toBeDefined();
  if (run.failedWhileOpening) {
    expect(run.failure).toBe(port.injected);
    return;
  }
  expect(isSessionError(run.failure, "persist-failed"), `${run.failedStep}: ${String(run.failure)}`).toBe(true);
  const error = run.failure as SessionError;
  expect(error.cause).toBe(port.injected);
  expect(error.path).toBe(run.path);
  expect(error.message).toContain(run.path!);
  expect(run.latchViolations).toEqual([]);
}

describe("faults: each storage operation of the script fails once", () => {
  // One test per k, so one bad step does not hide the others.
  for (let k = 1; k <= baseline.opLog.length; k++) {
    it(`operation ${baseline.opLog[k - 1]} fails`, async () => {
      const plain = memoryStorage();
      const port = faultyPort(plain, { failAt: k });
      const run = await runScript(port);
      expect(describeOperations(port)[k - 1]).toBe(baseline.opLog[k - 1]);
      if (run.reopened) {
        // A reopen that succeeded loaded exactly what session 1 wrote, images resolved.
        expect(json(run.reopened)).toEqual(json(run.entries.slice(0, run.reopened.length)));
      }
      checkSurfacedFailure(port, run);
      await checkStoredPrefix(plain, run);
    });
  }
});

const LEGACY = "sessions/--legacy--/large-session.jsonl";
const legacyOriginal = new Uint8Array(await readFile(join(CORPUS_DIR, "badlogic__pi-mono/large-session.jsonl")));

async function seededLegacy(): Promise<MemoryStorage> {
  const storage = memoryStorage();
  await storage.write(LEGACY, legacyOriginal);
  return storage;
}

/** The fault-free migrating open: its operations, and the file it leaves. */
async function measureMigration(): Promise<{ ops: string[]; types: string[]; migrated: Uint8Array | null; backup: Uint8Array | null }> {
  const plain = await seededLegacy();
  const port = faultyPort(plain);
  const sm = await SessionManager.open(port, LEGACY);
  const types = sm.getEntries().map((e) => e.type);
  await sm.close();
  return { ops: port.log.map((o) => `${o.op} ${o.path}`), types, migrated: await plain.read(LEGACY), backup: await plain.read(`${LEGACY}.v1.bak`) };
}

const migration = await measureMigration();

describe("faults: a migration rewrite that fails at any step keeps the original", () => {
  it("the fault-free migration backs up, rewrites, syncs and removes the backup", () => {
    expect(migration.ops).toEqual(
      expect.arrayContaining([`write ${LEGACY}.v1.bak`, `sync ${LEGACY}.v1.bak`, `write ${LEGACY}`, `sync ${LEGACY}`, `remove ${LEGACY}.v1.bak`]),
    );
    expect(new TextDecoder().decode(migration.migrated!.subarray(0, 300))).toContain('"version":3');
    expect(migration.backup).toBeNull();
    expect(migration.types.length).toBeGreaterThan(100);
  });

  migration.ops.forEach((op, i) => {
    const k = i + 1;
    it(`operation ${k}:${op} of the migrating open fails`, async () => {
      const plain = await seededLegacy();
      const port = faultyPort(plain, { failAt: k });
      const error = await SessionManager.open(port, LEGACY).then(
        async (sm) => {
          await sm.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(port.injected).toBeDefined();
      expect(error, `the fault at ${op} surfaced`).toBeDefined();
      if (error !== port.injected) {
        expect(isSessionError(error, "persist-failed"), String(error)).toBe(true);
        expect((error as SessionError).cause).toBe(port.injected);
        expect((error as SessionError).message).toContain(LEGACY);
      }

      const file = await plain.read(LEGACY);
      const backup = await plain.read(`${LEGACY}.v1.bak`);
      const holdsOriginal = (bytes: Uint8Array | null) => bytes !== null && Buffer.from(bytes).equals(Buffer.from(legacyOriginal));
      expect(holdsOriginal(file) || holdsOriginal(backup), "the original is in the file or its backup").toBe(true);
      // Whatever the file holds now is a complete session: the original or the full migration.
      const reread = await SessionManager.open(plain, LEGACY, { readOnly: true });
      expect(reread.getLoadProblems()).toEqual([]);
      expect(reread.getEntries().map((e) => e.type)).toEqual(migration.types);
      await reread.close();
    });
  });

  it("an open that fails in the migration rewrite releases the writer lock", async () => {
    const rewriteStep = migration.ops.indexOf(`write ${LEGACY}`) + 1;
    expect(rewriteStep).toBeGreaterThan(0);
    const plain = await seededLegacy();
    const port = faultyPort(plain, { failAt: rewriteStep });
    await expect(SessionManager.open(port, LEGACY)).rejects.toSatisfy((e: unknown) => isSessionError(e, "persist-failed"));
    // The failed open returned no session that could release the lock: the open itself must.
    const retry = await SessionManager.open(plain, LEGACY);
    expect(retry.getHeader()!.version).toBe(3);
    await retry.close();
  });
});
