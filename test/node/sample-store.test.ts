/**
 * The sample store (scripts/build-samples.ts) never hides a user's sessions: its sessions carry
 * their own fixed dates (headers, file names, session ids, entries, messages and file mtimes; none
 * is the build's), the store says it holds samples (its marker), `sessionkit serve` reports it with
 * `samples: true`, and the viewer's listing puts the user's sessions first, however old they are.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { SAMPLE_STORE_MARKER } from "../../cli/serve/sample-store.js";
import { startServe } from "../../cli/serve/server.js";
import { SessionManager, type SessionInfo } from "../../src/index.js";
import { PortStoreSource } from "../../web-demo/src/data/source.js";
import { buildSamples, SAMPLE_STARTS, type SampleSession, type SampleStore } from "../../scripts/build-samples.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

let tmp: string;
let store: SampleStore;
let storage: NodeFsStorage;
let builtAfter: number;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sessionkit-sample-store-"));
  builtAfter = Date.now();
  store = await buildSamples(join(tmp, "samples"));
  storage = nodeFsStorage({ root: store.root });
});

afterAll(async () => {
  await storage?.close();
  await rm(tmp, { recursive: true, force: true });
});

const sample = (kind: SampleSession["kind"]) => store.sessions.find((s) => s.kind === kind)!;

/** Every time a session file holds: the records' ISO timestamps and the messages' ms timestamps. */
async function timesIn(path: string, root = store.root): Promise<number[]> {
  const times: number[] = [];
  for (const line of (await readFile(join(root, path), "utf8")).split("\n")) {
    if (line.trim() === "") continue;
    const record = JSON.parse(line) as { timestamp?: string; message?: { timestamp?: number } };
    if (record.timestamp !== undefined) times.push(Date.parse(record.timestamp));
    if (typeof record.message?.timestamp === "number") times.push(record.message.timestamp);
  }
  return times;
}

describe("the sample store's dates", () => {
  it("each built session starts at its fixed date, in its header, file name and UUIDv7 id; no time in any file is the build's", async () => {
    const built = store.sessions.filter((s): s is SampleSession & { kind: keyof typeof SAMPLE_STARTS } => s.kind !== "legacy-v1");
    expect(built.map((s) => s.kind).sort()).toEqual(Object.keys(SAMPLE_STARTS).sort());
    for (const session of built) {
      const start = Date.parse(SAMPLE_STARTS[session.kind]);
      const header = (await SessionManager.open(storage, session.path, { readOnly: true })).getHeader()!;
      expect(Date.parse(header.timestamp), session.kind).toBe(start);
      expect(session.path.split("/").at(-1)!.startsWith(SAMPLE_STARTS[session.kind].replace(/[:.]/g, "-")), session.kind).toBe(true);
      expect(parseInt(session.id.replace("-", "").slice(0, 12), 16), session.kind).toBe(start);
    }
    for (const session of store.sessions) {
      const times = await timesIn(session.path);
      expect(times.length, session.kind).toBeGreaterThan(1);
      expect(times.every((time) => !Number.isNaN(time) && time < builtAfter), session.kind).toBe(true);
    }
  });

  it("the listing orders them by their own dates; each file's mtime is its latest time", async () => {
    const listed = await SessionManager.listAll(storage);
    const kindOf = (info: SessionInfo) => store.sessions.find((s) => s.path === info.path)!.kind;
    expect(listed.map(kindOf)).toEqual(["large", "omp", "custom", "images", "compaction", "branching", "fork", "legacy-v1"]);
    for (const info of listed) {
      const latest = Math.max(...(await timesIn(info.path)));
      expect((await stat(join(store.root, info.path))).mtimeMs, kindOf(info)).toBe(latest);
      expect(info.modified.getTime()).toBeLessThanOrEqual(latest);
    }
  });

  it("the same content builds with the same dates", async () => {
    const again = await buildSamples(join(tmp, "again"));
    // File names differ after the time: the ids' random bits.
    const dates = (built: SampleStore) =>
      Promise.all(built.sessions.map(async (s) => ({ kind: s.kind, entries: s.entries, file: s.path.split("/").at(-1)!.slice(0, 24), times: await timesIn(s.path, built.root) })));
    expect(await dates(again)).toEqual(await dates(store));
  });

  it("a session written today sorts above every sample in the same store", async () => {
    const copy = nodeFsStorage({ root: join(tmp, "again") });
    try {
      const sm = await SessionManager.create(copy, "/home/me/project");
      sm.appendMessage(userMsg("a question asked today"));
      sm.appendMessage(assistantMsg("an answer"));
      await sm.close();
      expect((await SessionManager.listAll(copy))[0]!.firstMessage).toBe("a question asked today");
    } finally {
      await copy.close();
    }
  });

  it("the store's marker names every sample session", async () => {
    const marker = JSON.parse(await readFile(join(store.root, SAMPLE_STORE_MARKER), "utf8")) as { sessions: { kind: string; path: string }[] };
    expect(marker.sessions.map(({ kind, path }) => ({ kind, path }))).toEqual(store.sessions.map(({ kind, path }) => ({ kind, path })));
  });
});

describe("samples are a group of their own", () => {
  it("sessionkit serve reports the sample store with samples: true, and no other store", async () => {
    const own = await mkdtemp(join(tmpdir(), "sessionkit-own-store-"));
    const server = await startServe({ stores: [{ root: own, label: "mine" }, { root: store.root, label: "samples" }], port: 0, viewerDir: null });
    try {
      const response = await fetch(`${server.origin}/api/stores`, { headers: { authorization: `Bearer ${server.token}` } });
      const served = (await response.json()) as { label: string; samples?: boolean }[];
      expect(served.map(({ label, samples }) => ({ label, samples }))).toEqual([
        { label: "mine", samples: undefined },
        { label: "samples", samples: true },
      ]);
    } finally {
      await server.close();
      await rm(own, { recursive: true, force: true });
    }
  });

  it("the viewer lists the user's sessions first, even one older than every sample, then the samples by date", async () => {
    const mine = memoryStorage();
    const sm = await SessionManager.create(mine, "/home/me/project");
    const longAgo = Date.parse("2025-06-01T10:00:00.000Z");
    sm.appendMessage({ ...userMsg("my own question from June"), timestamp: longAgo });
    sm.appendMessage({ ...assistantMsg("my own answer"), timestamp: longAgo + 5_000 });
    await sm.close();
    const listing = async (samples: boolean) => {
      const source = new PortStoreSource("serve", [{ id: "mine", label: "mine", storage: mine, writable: false }, { id: "samples", label: "samples", storage, writable: false, samples }], false);
      return (await source.listSessions()).map((info) => (info.storeId === "mine" ? "mine" : store.sessions.find((s) => s.path === info.path)!.kind));
    };
    expect(await listing(true)).toEqual(["mine", "large", "omp", "custom", "images", "compaction", "branching", "fork", "legacy-v1"]);
    // Without the flag, dates alone decide: the user's June session would sit below every sample.
    expect((await listing(false)).at(-1)).toBe("mine");
  });
});
