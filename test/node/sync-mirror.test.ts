/**
 * The mirror under `sessionkit sync` (src/sync/mirror.ts), between memory ports: what travels on
 * each pass (only appended bytes, a rewrite whole, the blobs lines reference), what is held back
 * (a torn last line), how a pass recovers from a target or a state it cannot trust, and the
 * subtree port that puts each machine's stores in their own folder of the shared store.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage, type MemoryStorage } from "../../adapters/memory/index.js";
import { subtreeStorage } from "../../adapters/subtree.js";
import type { StoragePort } from "../../src/port.js";
import { emptyMirrorState, isSessionFilePath, mirrorSessions, type MirrorOptions, type MirrorState } from "../../src/sync/mirror.js";
import { sha256Hex } from "../../src/blobs/blob-store.js";
import { countingPort } from "../shared/counting-port.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);
const line = (value: Record<string, unknown>) => `${JSON.stringify(value)}\n`;
const header = (id: string) => line({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/app" });
const entry = (id: string, text = `entry ${id}`) => line({ type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text } });

const A = "sessions/--work-app--/2026-01-01T00-00-00-000Z_a.jsonl";
const B = "sessions/--work-app--/2026-01-01T00-00-00-000Z_b.jsonl";
const FLAT = "sessions/2026-01-01T00-00-00-000000_c.jsonl";

/** Every call that changes the target, as "op path bytes". */
function recording(port: StoragePort): { port: StoragePort; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    port: {
      ...port,
      kind: port.kind,
      read: (path, range) => port.read(path, range),
      stat: (path) => port.stat(path),
      list: (dir) => port.list(dir),
      async append(path, data) {
        calls.push(`append ${path} ${data.length}`);
        return port.append(path, data);
      },
      async write(path, data) {
        calls.push(`write ${path} ${data.length}`);
        return port.write(path, data);
      },
      truncate: (path, size) => port.truncate(path, size),
      async remove(path) {
        calls.push(`remove ${path}`);
        return port.remove(path);
      },
    },
  };
}

async function text(port: StoragePort, path: string): Promise<string | null> {
  const data = await port.read(path);
  return data && decoder.decode(data);
}

async function setup(): Promise<{ source: MemoryStorage; target: MemoryStorage; state: MirrorState; pass: (options?: Partial<MirrorOptions>) => ReturnType<typeof mirrorSessions>; calls: string[] }> {
  const source = memoryStorage();
  const target = memoryStorage();
  const recorded = recording(target);
  const state = emptyMirrorState();
  const pass = (options: Partial<MirrorOptions> = {}) => mirrorSessions(source, recorded.port, { state, ...options });
  return { source, target, state, pass, calls: recorded.calls };
}

describe("mirrorSessions", () => {
  it("copies every session file of both layouts, then only what was appended, then nothing", async () => {
    const { source, target, pass, calls } = await setup();
    await source.write(A, bytes(header("a") + entry("1")));
    await source.write(B, bytes(header("b")));
    await source.write(FLAT, bytes(header("c")));
    await source.write("auth.json", bytes("{}"));
    await source.write("sessions/--work-app--/notes.txt", bytes("not a session"));

    const first = await pass();
    expect(first).toMatchObject({ sessions: 3, created: 3, appended: 0, rewritten: 0, entries: 4 });
    for (const path of [A, B, FLAT]) expect(await text(target, path)).toBe(await text(source, path));
    expect(await target.stat("auth.json")).toBeNull();
    expect(await target.stat("sessions/--work-app--/notes.txt")).toBeNull();

    calls.length = 0;
    const added = entry("2") + entry("3");
    await source.append(A, bytes(added));
    const second = await pass();
    expect(second).toMatchObject({ sessions: 3, created: 0, appended: 1, rewritten: 0, bytes: added.length, entries: 2 });
    expect(calls).toEqual([`append ${A} ${added.length}`]);
    expect(await text(target, A)).toBe(await text(source, A));

    calls.length = 0;
    expect(await pass()).toMatchObject({ created: 0, appended: 0, rewritten: 0, bytes: 0 });
    expect(calls).toEqual([]);
  });

  it("an append to a file as the last pass left it costs one read of the target: its last 4 KiB", async () => {
    const source = memoryStorage();
    const target = memoryStorage();
    const counted = countingPort(target);
    const state = emptyMirrorState();
    const body = Array.from({ length: 200 }, (_, i) => entry(String(i))).join("");
    await source.write(A, bytes(header("a") + body));
    await mirrorSessions(source, counted.port, { state });
    const before = { ...counted.counter };
    await source.append(A, bytes(entry("new")));
    expect(await mirrorSessions(source, counted.port, { state })).toMatchObject({ appended: 1 });
    expect([counted.counter.reads - before.reads, counted.counter.bytesRead - before.bytesRead]).toEqual([1, 4096]);
    expect(await text(target, A)).toBe(await text(source, A));
  });

  it("holds back a line still being written, and sends it once it ends", async () => {
    const { source, target, pass } = await setup();
    const complete = header("a") + entry("1");
    const torn = entry("2");
    await source.write(A, bytes(complete + torn.slice(0, 20)));
    await source.write(B, bytes(header("b").slice(0, 10))); // not even a header yet
    expect(await pass()).toMatchObject({ created: 1 });
    expect(await text(target, A)).toBe(complete);
    expect(await target.stat(B)).toBeNull();

    await source.append(A, bytes(torn.slice(20)));
    await source.write(B, bytes(header("b")));
    expect(await pass()).toMatchObject({ created: 1, appended: 1 });
    expect(await text(target, A)).toBe(complete + torn);
    expect(await text(target, B)).toBe(header("b"));
  });

  it("copies a rewritten file whole, as one write: a new header of a larger file, a file that shrank", async () => {
    const { source, target, pass, calls } = await setup();
    const body = Array.from({ length: 200 }, (_, i) => entry(String(i))).join("");
    await source.write(A, bytes(header("a") + body));
    await source.write(B, bytes(header("b") + body));
    await pass();
    calls.length = 0;

    // A title rewritten in place (oh-my-pi) or a migration: the first line changes, the file grows.
    const retitled = header("a").replace('"cwd"', '"title":"renamed","cwd"') + body + entry("new");
    await source.write(A, bytes(retitled));
    // A file cut back (a torn tail repaired, an entry removed).
    const cut = header("b") + body.slice(0, body.length / 2).replace(/[^\n]*$/, "");
    await source.write(B, bytes(cut));
    expect(await pass()).toMatchObject({ appended: 0, rewritten: 2 });
    expect(calls.sort()).toEqual([`write ${A} ${retitled.length}`, `write ${B} ${cut.length}`].sort());
    expect(await text(target, A)).toBe(retitled);
    expect(await text(target, B)).toBe(cut);
  });

  it("a change in the middle of what the target holds is caught by the last 4 KiB before its end", async () => {
    const { source, target, pass } = await setup();
    const lines = Array.from({ length: 300 }, (_, i) => entry(String(i)));
    await source.write(A, bytes(header("a") + lines.join("")));
    await pass();
    lines[lines.length - 3] = entry("changed", "same length!");
    const changed = header("a") + lines.join("") + entry("more");
    await source.write(A, bytes(changed));
    expect(await pass()).toMatchObject({ rewritten: 1 });
    expect(await text(target, A)).toBe(changed);
  });

  it("trusts no state: a target appended to without the state saved (a kill) gets only the rest; a target changed behind its back is copied again", async () => {
    const { source, target, state, pass } = await setup();
    await source.write(A, bytes(header("a") + entry("1")));
    await source.write(B, bytes(header("b") + entry("1")));
    await pass();
    const saved = structuredClone(state);

    await source.append(A, bytes(entry("2") + entry("3")));
    await pass();
    // The state of before that pass, as a kill before the save would leave it; and more appended since.
    Object.assign(state, structuredClone(saved));
    await source.append(A, bytes(entry("4")));
    // A partial append the kill cut mid-line: the target holds part of entry 5.
    const five = entry("5");
    await source.append(B, bytes(entry("2") + five));
    await target.append(B, bytes(entry("2") + five.slice(0, 9)));

    expect(await pass()).toMatchObject({ appended: 2, rewritten: 0 });
    expect(await text(target, A)).toBe(await text(source, A));
    expect(await text(target, B)).toBe(await text(source, B));

    // Someone else's bytes in the target: not a prefix of the source any more.
    await target.write(A, bytes(header("a") + entry("x")));
    await source.append(A, bytes(entry("6")));
    expect(await pass()).toMatchObject({ rewritten: 1 });
    expect(await text(target, A)).toBe(await text(source, A));
  });

  it("removes from the target the session files the source lost, the state's or not (a kill before it was saved); nothing else", async () => {
    const { source, target, state, pass } = await setup();
    await source.write(A, bytes(header("a")));
    await source.write(B, bytes(header("b")));
    await pass();
    await target.write(FLAT, bytes(header("copied, but the state was lost")));
    await target.write(".sessionkit/catalog/x.json", bytes("{}"));
    await source.remove(A);
    expect(await pass()).toMatchObject({ sessions: 1, removed: 2 });
    expect(await target.stat(A)).toBeNull();
    expect(await target.stat(FLAT)).toBeNull();
    expect(await target.stat(B)).not.toBeNull();
    expect(await target.stat(".sessionkit/catalog/x.json")).not.toBeNull();
    expect(Object.keys(state.files)).toEqual([B]);
  });

  it("copies the blobs lines reference before the lines, once; a missing one is said once and copied when it appears", async () => {
    const { source, target, pass, calls } = await setup();
    const image = bytes("an image's bytes");
    const late = bytes("a blob written after its line");
    const [imageHash, lateHash] = [await sha256Hex(image), await sha256Hex(late)];
    await source.write(`blobs/${imageHash}`, image);
    await source.write("blobs/unreferenced", bytes("x"));
    const refLine = (hash: string) => entry(hash.slice(0, 6), `blob:sha256:${hash}`);
    await source.write(A, bytes(header("a") + refLine(imageHash)));
    await source.write(B, bytes(header("b") + refLine(imageHash)));
    const first = await pass();
    expect(first).toMatchObject({ blobs: 1, blobBytes: image.length });
    expect(calls.indexOf(`write blobs/${imageHash} ${image.length}`)).toBeLessThan(calls.findIndex((call) => call.startsWith(`write ${A}`)));
    expect(await target.stat("blobs/unreferenced")).toBeNull();

    const warnings: string[] = [];
    await source.append(A, bytes(refLine(lateHash) + refLine(imageHash)));
    expect(await pass({ onWarning: (message) => warnings.push(message) })).toMatchObject({ appended: 1, blobs: 0 });
    expect(warnings).toEqual([expect.stringContaining(`blobs/${lateHash}: referenced by a session, missing in the source`)]);
    expect(await pass({ onWarning: (message) => warnings.push(message) })).toMatchObject({ blobs: 0 });
    expect(warnings).toHaveLength(1);

    await source.write(`blobs/${lateHash}`, late);
    expect(await pass()).toMatchObject({ blobs: 1 });
    expect(await text(target, `blobs/${lateHash}`)).toBe(decoder.decode(late));
  });

  it("with `paths`, looks at those files only (a watch's changes), a vanished one included", async () => {
    const { source, target, pass } = await setup();
    await source.write(A, bytes(header("a")));
    await source.write(B, bytes(header("b")));
    await pass();
    await source.append(A, bytes(entry("1")));
    await source.append(B, bytes(entry("1")));
    expect(await pass({ paths: [A, "auth.json"] })).toMatchObject({ sessions: 1, appended: 1 });
    expect(await text(target, B)).toBe(header("b"));
    await source.remove(B);
    expect(await pass({ paths: [B] })).toMatchObject({ sessions: 0, removed: 1 });
    expect(await target.stat(B)).toBeNull();
  });

  it("appends a large gain in pieces that each end a line", async () => {
    const { source, target, pass, calls } = await setup();
    await source.write(A, bytes(header("a")));
    await pass();
    calls.length = 0;
    const big = "x".repeat(1 << 20);
    const gain = Array.from({ length: 10 }, (_, i) => entry(String(i), big)).join("");
    await source.append(A, bytes(gain));
    await pass();
    expect(calls.length).toBeGreaterThan(1);
    expect(await text(target, A)).toBe(await text(source, A));
  });

  it("knows a session file's path", () => {
    expect([A, FLAT, "sessions/x.txt", "sessions/a/b/c.jsonl", "blobs/x.jsonl", "sessions"].map(isSessionFilePath)).toEqual([true, true, false, false, false, false]);
  });
});

describe("subtreeStorage", () => {
  it("is one directory of another port: paths, listings and watches relative to it; closing it leaves the port open", async () => {
    const base = memoryStorage();
    const alice = subtreeStorage(base, "machines/alice/pi");
    await alice.write("sessions/x.jsonl", bytes("x\n"));
    await base.write("machines/bob/pi/sessions/y.jsonl", bytes("y\n"));
    expect(await text(base, "machines/alice/pi/sessions/x.jsonl")).toBe("x\n");
    expect((await alice.list("")).map((entry) => entry.name)).toEqual(["sessions"]);
    expect(await alice.stat("sessions/y.jsonl")).toBeNull();
    const seen: string[] = [];
    const watch = await alice.watch!("", (path) => seen.push(path));
    await alice.append("sessions/x.jsonl", bytes("more\n"));
    await base.append("machines/bob/pi/sessions/y.jsonl", bytes("more\n"));
    await watch.close();
    expect(seen).toEqual(["sessions/x.jsonl"]);
    await expect(alice.read("../bob/pi/sessions/y.jsonl")).rejects.toMatchObject({ code: "invalid" });
    await alice.close();
    expect(await text(base, "machines/bob/pi/sessions/y.jsonl")).toBe("y\nmore\n");
  });
});
