/**
 * Lazy open (format/message-line.ts, format/lazy-session-file.ts, SessionManager's `parse`): a
 * lazily read file gives what the full read gives, line for line, whatever its bytes. The oracle is
 * readSessionFile itself: thousands of message lines, valid and damaged in every way we could think
 * of (and at random), in pi's dialect and seed 003's, read both ways at several range sizes.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { pathToRoot, type EntryHead } from "../../src/session/context.js";
import { readSessionFile } from "../../src/format/session-file.js";
import { SessionManager, type SessionEntry, type StoragePort } from "../../src/index.js";
import { readSessionFileLazily, type LazyEntry } from "../../src/format/lazy-session-file.js";
import { messageLineShape, readMessageLine } from "../../src/format/message-line.js";
import { UnparsedEntry } from "../../src/format/unparsed-entry.js";
import { mulberry32, type Rng } from "../shared/prng.js";

const encoder = new TextEncoder();
const PI_HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const SEED003_HEADER = '{"type":"session_header","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';

/** A valid message line as pi writes it (seed 003: `parent_id`). */
function messageLine(rng: Rng, index: number, parentKey = "parentId"): string {
  const id = `e${index.toString(16).padStart(7, "0")}`;
  const parent = index === 0 ? null : `e${(index - 1).toString(16).padStart(7, "0")}`;
  const role = rng.pick(["user", "assistant", "toolResult", "custom", "bashExecution"]);
  const text = rng.pick(["plain text", 'quotes " and \\ backslash', "tab\tnew\nline", "日本語 é 🙂", "\u0000\u001f control", "blob:sha256:" + "a".repeat(64), "x".repeat(rng.between(0, 300))]);
  const message: Record<string, unknown> = { role, content: [{ type: "text", text }, { type: "toolCall", id: "t1", name: "bash", arguments: { command: "ls -la", deep: [[[{ n: -1.5e-3 }]]], ok: true, none: null } }] };
  if (rng.chance(0.8)) message.timestamp = 1767225600000 + index;
  if (role === "assistant") Object.assign(message, { provider: "anthropic", model: "claude", usage: { input: 1, cost: { total: 0.001 } } });
  return JSON.stringify({ type: "message", id, [parentKey]: parent, timestamp: `2026-01-01T00:00:${String(index % 60).padStart(2, "0")}.000Z`, message });
}

/** Edits of a valid line that a fast reader could get wrong. */
const EDITS: Array<(line: string, rng: Rng) => string> = [
  (line) => line.replace('"message":{', '"message":{"role":"x",'), // the role twice: the last one counts
  (line) => line.replace(/}$/, ',"id":"dup"}'), // a top-level field again
  (line) => line.replace(/}$/, ',"type":"label"}'),
  (line) => line.replace(/}$/, ',"parentId":"p"}'),
  (line) => line.replace(/}$/, ',"parent_id":"p"}'),
  (line) => line.replace(/}$/, ',"timestamp":5}'),
  (line) => line.replace(/}$/, ',"message":7}'),
  (line) => line.replace(/}$/, ',"ty\\u0070e":"label"}'), // an escaped key
  (line) => line.replace(/}$/, ',"targetId":"x","from_id":"y"}'),
  (line) => line.replace(/"timestamp":\d+/, '"timestamp":"soon"'),
  (line) => line.replace(/"timestamp":\d+/, '"timestamp":1e400'),
  (line) => line.replace(/"timestamp":\d+/, '"timestamp":-0.5E+2'),
  (line) => line.replace(/"timestamp":\d+/, '"timestamp":01'),
  (line) => line.replace(/"timestamp":\d+/, '"time\\u0073tamp":"x"'),
  (line) => line.replace('"role":"', '"role":"\\u0075'),
  (line) => line.replace(/"id":"[^"]*"/, '"id":""'),
  (line) => line.replace(/"id":"[^"]*"/, '"id":"\\u0041"'),
  (line) => line.replace(/"id":"[^"]*"/, '"id":5'),
  (line) => line.replace(/"parentId":(null|"[^"]*")/, '"parentId":7'),
  (line) => line.replace(/"message":\{"role":"[^"]*"/, '"message":{"role":5'),
  (line) => line.replace('"text":"', '"text":"\\u0062lob:sha256:'), // an escaped blob ref
  (line) => line.replace('"text":"', '"text":"b\\u006cob:sha256:'),
  (line) => line.replace('"text":"', '"text":"\\u0062l\\u006Fb:sha256:'),
  (line) => line.replace('"text":"', '"text":"\\nblob:sha256:'), // an escape first: printed text, no ref
  (line) => line.replace('"text":"', '"text":"\\bblob:sha256:'),
  (line) => line.replace('"text":"', '"text":"\\\\blob:sha256:'),
  (line) => line.replace('"text":"', '"text":"see blob:sha256:'), // the prefix inside a text
  (line) => line.replace(/"id":"[^"]*"/, '"id":"blob:sha256:1"'), // a ref-like head
  (line) => line.replace(/"timestamp":"/, '"timestamp":"blob:sha256:'),
  (line) => line.replace('"text":"', '"text":"\t'), // a raw control character
  (line) => line.replace('"text":"', '"text":"\\x'),
  (line) => line.replace('"text":"', '"text":"\\u12G4'),
  (line) => line.replace('"ok":true', '"ok":tru'),
  (line) => line.replace('"none":null', '"none":nul'),
  (line) => line.replace('[[[', '[[[1,'),
  (line) => line.replace('[[[', '[[[,'),
  (line) => line.replace(']]]', ']],]'),
  (line) => line.replace('{"n"', '{ "n" '),
  (line) => line.replace(/}$/, "} "),
  (line) => line.replace(/}$/, "}\r"),
  (line) => line.replace(/}$/, "}x"),
  (line) => line.replace(/}$/, "}{}"),
  (line) => line.slice(0, -1),
  (line) => line + line,
  (line) => "\ufeff" + line,
  (line) => " " + line,
  (line) => line.replace('{"type":"message",', '{"type":"message", '),
  (line) => line.replace(/"deep":\[\[\[\{"n":-1.5e-3\}\]\]\]/, `"deep":${"[".repeat(3000)}${"]".repeat(3000)}`),
  (line) => line.replace(/"deep":\[\[\[\{"n":-1.5e-3\}\]\]\]/, `"deep":${"[".repeat(3000)}${"]".repeat(2999)}`),
  (line, rng) => {
    // A random byte changed, dropped or put in.
    const at = rng.int(line.length);
    const char = String.fromCharCode(rng.pick([0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x22, 0x2c, 0x2d, 0x2e, 0x30, 0x31, 0x3a, 0x45, 0x5b, 0x5c, 0x5d, 0x65, 0x75, 0x7b, 0x7d, 0xe9]));
    const kind = rng.int(3);
    return kind === 0 ? line.slice(0, at) + char + line.slice(at + 1) : kind === 1 ? line.slice(0, at) + line.slice(at + 1) : line.slice(0, at) + char + line.slice(at);
  },
];

/** A session file of `count` message lines (every other one edited), in pi's dialect or seed 003's. */
function sessionText(seed: number, count: number, dialect: "pi" | "seed003"): string {
  const rng = mulberry32(seed);
  const lines = [dialect === "pi" ? PI_HEADER : SEED003_HEADER];
  for (let i = 0; i < count; i++) {
    const line = messageLine(rng, i, dialect === "pi" ? "parentId" : "parent_id");
    lines.push(rng.chance(0.5) ? rng.pick(EDITS)(line, rng) : line);
    if (rng.chance(0.05)) lines.push(JSON.stringify({ type: "label", id: `l${i}`, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", targetId: "e0000000", label: "x" }));
  }
  return lines.join("\n") + (rng.chance(0.5) ? "\n" : "");
}

/** The entries, parsed; an unparsed entry's head must be what its parse says. */
function entriesOf(entries: readonly LazyEntry[]): SessionEntry[] {
  return entries.map((entry) => {
    if (!(entry instanceof UnparsedEntry)) return entry;
    const parsed = entry.entry();
    expect({ type: entry.type, id: entry.id, parentId: entry.parentId, timestamp: entry.timestamp, role: entry.role }, `line ${entry.line}`).toEqual({
      type: parsed.type,
      id: parsed.id,
      parentId: parsed.parentId,
      timestamp: parsed.timestamp,
      role: parsed.type === "message" ? parsed.message.role : undefined,
    });
    return parsed;
  });
}

async function storageWith(text: string): Promise<StoragePort> {
  const storage = memoryStorage();
  await storage.write("s.jsonl", encoder.encode(text));
  return storage;
}

describe("lazy reading equals the full read", () => {
  for (const dialect of ["pi", "seed003"] as const) {
    for (let round = 0; round < 8; round++) {
      const seed = 0x1a2b_0000 + round * 101 + (dialect === "pi" ? 0 : 7);
      it(`${dialect}: 300 lines, half of them edited (seed ${seed}), at several range sizes`, async () => {
        const storage = await storageWith(sessionText(seed, 300, dialect));
        const full = await readSessionFile(storage, "s.jsonl");
        expect(full.kind).toBe("session");
        if (full.kind !== "session") return;
        for (const chunkSize of [4 << 20, 4096, 61, 7]) {
          const lazy = await readSessionFileLazily(storage, "s.jsonl", { chunkSize });
          expect(lazy.kind).toBe("session");
          if (lazy.kind !== "session") return;
          // Some lines were left unparsed, or this test would show nothing about them.
          expect(lazy.entries.filter((entry) => entry instanceof UnparsedEntry).length, `chunk ${chunkSize}`).toBeGreaterThan(50);
          expect(lazy.problems, `chunk ${chunkSize}`).toEqual(full.problems);
          expect(lazy.tail).toEqual(full.tail);
          expect(lazy.extent).toEqual(full.extent);
          expect(lazy.header).toEqual(full.header);
          expect(lazy.dialect).toBe(full.dialect);
          expect(entriesOf(lazy.entries), `chunk ${chunkSize}`).toEqual(full.entries);
          expect([...lazy.entriesWithBlobRefs].map((entry) => entry.id).sort()).toEqual([...full.entriesWithBlobRefs].map((entry) => entry.id).sort());
        }
      });
    }
  }

  it("each edit alone, on every kind of message line", async () => {
    const rng = mulberry32(0x5eed);
    for (let e = 0; e < EDITS.length; e++) {
      for (let k = 0; k < 20; k++) {
        const line = EDITS[e]!(messageLine(rng, k + 1), rng);
        const text = `${PI_HEADER}\n${messageLine(rng, 0)}\n${line}\n`;
        const storage = await storageWith(text);
        const full = await readSessionFile(storage, "s.jsonl");
        const lazy = await readSessionFileLazily(storage, "s.jsonl");
        if (full.kind !== "session" || lazy.kind !== "session") throw new Error("not read");
        expect(lazy.problems, `edit ${e}: ${line.slice(0, 200)}`).toEqual(full.problems);
        expect(entriesOf(lazy.entries), `edit ${e}: ${line.slice(0, 200)}`).toEqual(full.entries);
        expect([...lazy.entriesWithBlobRefs].map((entry) => entry.id), `edit ${e}: ${line.slice(0, 200)}`).toEqual([...full.entriesWithBlobRefs].map((entry) => entry.id));
      }
    }
  });

  it("old versions and files that are not sessions are read (and refused) as the full read does", async () => {
    const v2 = '{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n' + messageLine(mulberry32(1), 0).replace('"role":"user"', '"role":"hookMessage"') + "\n";
    const lazy = await readSessionFileLazily(await storageWith(v2), "s.jsonl");
    expect(lazy.kind === "session" && lazy.migratedFrom).toBe(2);
    expect(lazy.kind === "session" && entriesOf(lazy.entries)[0]!.type === "message" && (entriesOf(lazy.entries)[0] as { message: { role: string } }).message.role).toBe("custom");
    await expect(readSessionFileLazily(await storageWith('{"type":"message"}\n'), "s.jsonl")).rejects.toThrow(/not a session file/);
    expect(await readSessionFileLazily(await storageWith(""), "s.jsonl")).toEqual({ kind: "empty" });
    expect(await readSessionFileLazily(memoryStorage(), "s.jsonl")).toEqual({ kind: "missing" });
  });
});

describe("readMessageLine", () => {
  const shape = messageLineShape("parentId");
  const read = (line: string) => {
    const bytes = encoder.encode(line + "\n");
    return readMessageLine(bytes, new DataView(bytes.buffer), 0, bytes.length, shape);
  };

  it("reads the head of a line pi wrote, where the line ends, and whether it may hold a blob ref", () => {
    const line = '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"image","data":"blob:sha256:00","mimeType":"image/png"}],"timestamp":1}}';
    const timestampStart = line.indexOf("2026");
    const messageTimestampStart = line.lastIndexOf(":1}}") + 1;
    expect(read(line)).toEqual({
      id: "a1",
      parentId: null,
      timestampStart,
      timestampEnd: timestampStart + 24,
      role: "user",
      blobRef: true,
      toolCallIdStart: -1,
      toolCallIdEnd: -1,
      messageTimestampStart,
      messageTimestampEnd: messageTimestampStart + 1,
      content: "array",
      end: encoder.encode(line).length,
    });
    expect(read(line.replace("blob:", "blab:"))?.blobRef).toBe(false);
    // Escapes: only a \u escape can spell a character of the prefix.
    expect(read(line.replace('"blob:', '"\\u0062lob:'))?.blobRef).toBe(true);
    expect(read(line.replace('"blob:', '"\\u0062\\u006Cob:'))?.blobRef).toBe(true);
    expect(read(line.replace('"blob:', '"\\u0063lob:'))?.blobRef).toBe(false);
    expect(read(line.replace('"blob:', '"\\nblob:'))?.blobRef).toBe(false);
    expect(read(line.replace('"blob:', '"\\"blob:'))?.blobRef).toBe(false);
    expect(read(line.replace("blob:sha256:00", "x").replace('"id":"a1"', '"id":"blob:sha256:a1"'))?.blobRef).toBe(true);
    expect(read(line.replace('"parentId":null', '"parentId":"p0"'))?.parentId).toBe("p0");
  });


  it("reads the message's own timestamp (the last, as JSON.parse keeps it) and what its content is: absent, a string, an array with no null item, or other", () => {
    const head = '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user"';
    const of = (rest: string) => {
      const found = read(head + rest);
      return found && { content: found.content, timestamp: found.messageTimestampStart < 0 ? null : (head + rest).slice(found.messageTimestampStart, found.messageTimestampEnd) };
    };
    expect(of("}}")).toEqual({ content: "absent", timestamp: null });
    expect(of(',"content":"hi","timestamp":12}}')).toEqual({ content: "string", timestamp: "12" });
    expect(of(',"timestamp":1,"content":[{"type":"text","text":"a"},"x",3,[null]],"timestamp":-2.5e3}}')).toEqual({ content: "array", timestamp: "-2.5e3" });
    expect(of(',"content":[]}}')).toEqual({ content: "array", timestamp: null });
    expect(of(',"content":[{"type":"text"},null]}}')).toEqual({ content: "other", timestamp: null });
    expect(of(',"content":[],"x":[null]}}')).toEqual({ content: "array", timestamp: null });
    expect(of(',"content":{"text":"a"}}}')).toEqual({ content: "other", timestamp: null });
    expect(of(',"content":null}}')).toEqual({ content: "other", timestamp: null });
    expect(of(',"content":7}}')).toEqual({ content: "other", timestamp: null });
    // The last content counts, as the last key does in JSON.parse.
    expect(of(',"content":null,"content":"ok"}}')).toEqual({ content: "string", timestamp: null });
    expect(of(',"content":"ok","content":[null]}}')).toEqual({ content: "other", timestamp: null });
    // A "content" or "timestamp" outside the message is not the message's.
    expect(of('},"content":3,"x":{"timestamp":5}}')).toEqual({ content: "absent", timestamp: null });
    expect(of(',"meta":{"content":null,"timestamp":"x"}}}')).toEqual({ content: "absent", timestamp: null });
  });
  it("leaves other field orders and other entry types to the full parse", () => {
    expect(read('{"id":"a1","type":"message","parentId":null,"timestamp":"t","message":{"role":"user"}}')).toBeNull();
    expect(read('{"type":"label","id":"a1","parentId":null,"timestamp":"t","targetId":"x"}')).toBeNull();
    expect(read('{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"content":"x","role":"user"}}')).toBeNull();
  });

  it("refuses a raw control character or a bad escape at any distance from the line's end", () => {
    for (let pad = 0; pad < 9; pad++) {
      const filler = "y".repeat(pad);
      for (const bad of ["\t", "\u0000", "\u001f", "\\x", "\\u12"]) {
        const line = `{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","x":"${filler}${bad}"}}`;
        expect(read(line), JSON.stringify(line)).toBeNull();
        expect(() => JSON.parse(line)).toThrow();
      }
      expect(read(`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","x":"${filler}\\n"}}`), `pad ${pad}`).not.toBeNull();
    }
  });

  it("checks the message's own role and timestamp only, not keys of that name elsewhere", () => {
    const line = '{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"role":5,"timestamp":"x"}]},"details":{"role":5,"timestamp":"x"}}';
    expect(read(line)?.role).toBe("user");
    expect(read(line.replace('"content"', '"role":"assistant","content"'))).toBeNull();
  });

  it("finds the message's toolCallId string, the last one as JSON.parse keeps it, not one nested deeper", () => {
    const idOf = (line: string) => {
      const head = read(line);
      return head && head.toolCallIdStart >= 0 ? line.slice(head.toolCallIdStart, head.toolCallIdEnd) : head && null;
    };
    const result = (rest: string) => `{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"toolResult",${rest}}}`;
    expect(idOf(result('"toolCallId":"c1","content":[{"type":"text","text":"\\"toolCallId\\":\\"no\\""}],"details":{"toolCallId":"deep"}'))).toBe("c1");
    expect(idOf(result('"toolCallId":"c1","content":[],"toolCallId":"c\\u0032"'))).toBe("c\\u0032");
    expect(idOf(result('"toolCallId":"c1","toolCallId":5'))).toBeNull();
    expect(idOf(result('"toolCallId":{"x":"y"},"isError":false'))).toBeNull();
    expect(idOf(result('"isError":false'))).toBeNull();
    expect(idOf(result('"content":[{"toolCallId":"c9"}]'))).toBeNull();
  });

  it("needs the line's newline within the range it is given", () => {
    const bytes = encoder.encode('{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user"}}\n');
    expect(readMessageLine(bytes, new DataView(bytes.buffer), 0, bytes.length - 1, shape)).toBeNull();
    expect(readMessageLine(bytes, new DataView(bytes.buffer), 0, bytes.length, shape)?.end).toBe(bytes.length - 1);
  });
});

describe("SessionManager: parse 'lazy' and 'full' give the same session", () => {
  it("entries, tree, branches, contexts at every leaf, children, labels, name and problems", async () => {
    for (const dialect of ["pi", "seed003"] as const) {
      const text = sessionText(0xbeef + (dialect === "pi" ? 0 : 1), 120, dialect);
      const storage = await storageWith(text);
      const lazy = await SessionManager.open(storage, "s.jsonl", { readOnly: true, parse: "lazy" });
      const full = await SessionManager.open(storage, "s.jsonl", { readOnly: true, parse: "full" });
      // Asked in an order that parses entries one by one before all of them.
      expect(lazy.buildSessionContext()).toEqual(full.buildSessionContext());
      expect(lazy.getLeafId()).toBe(full.getLeafId());
      expect(lazy.getLeafEntry()).toEqual(full.getLeafEntry());
      expect(lazy.getBranch()).toEqual(full.getBranch());
      expect(lazy.getLoadProblems()).toEqual(full.getLoadProblems());
      expect(lazy.getSessionName()).toEqual(full.getSessionName());
      const ids = full.getEntries().map((entry) => entry.id);
      for (const id of ids.filter((_, i) => i % 7 === 0)) {
        expect(lazy.getEntry(id)).toEqual(full.getEntry(id));
        expect(lazy.getEntry(id)).toBe(lazy.getEntry(id)); // parsed once, the same object after
        expect(lazy.buildSessionContext(id)).toEqual(full.buildSessionContext(id));
        expect(lazy.getBranch(id)).toEqual(full.getBranch(id));
        expect(lazy.getChildren(id)).toEqual(full.getChildren(id));
        expect(lazy.getLabel(id)).toEqual(full.getLabel(id));
      }
      expect(lazy.getTree()).toEqual(full.getTree());
      expect(lazy.getEntries()).toEqual(full.getEntries());
      await lazy.close();
      await full.close();
    }
  });

  it("appends, rewrites and a fork after a lazy open write what a full open writes", async () => {
    const text = sessionText(0xfeed, 60, "pi");
    const results: string[] = [];
    for (const parse of ["lazy", "full"] as const) {
      const storage = await storageWith(text);
      const sm = await SessionManager.open(storage, "s.jsonl", { parse });
      const leaf = sm.getLeafId()!;
      sm.branch(sm.getEntries()[3]!.id);
      sm.appendMessage({ role: "user", content: "again", timestamp: 1 });
      sm.branch(leaf);
      await sm.rewriteEntries();
      await sm.flush();
      const bytes = (await storage.read("s.jsonl"))!;
      // Ids of new entries are random: compare everything else.
      results.push(new TextDecoder().decode(bytes).replace(/"id":"[0-9a-f]{8}"/g, '"id":"?"').replace(/"timestamp":"[^"]+"/g, '"timestamp":"?"'));
      await sm.close();
    }
    expect(results[0]).toBe(results[1]);
  });
});

describe("pathToRoot", () => {
  /** The walk remembering every id it passed (how pathToRoot always worked). */
  function remembering(leaf: EntryHead | undefined, byId: ReadonlyMap<string, EntryHead>): EntryHead[] {
    const path: EntryHead[] = [];
    const seen = new Set<string>();
    for (let current = leaf; current && !seen.has(current.id); ) {
      seen.add(current.id);
      path.push(current);
      current = current.parentId ? byId.get(current.parentId) : undefined;
    }
    return path.reverse();
  }

  it("gives the remembering walk's path on random graphs with cycles, duplicate ids and missing parents", () => {
    const rng = mulberry32(0x9a7b);
    for (let round = 0; round < 300; round++) {
      const count = rng.between(1, 30);
      const heads: EntryHead[] = [];
      for (let i = 0; i < count; i++) {
        const parentId = rng.chance(0.15) ? null : `n${rng.int(count + 3)}`; // some parents missing
        heads.push({ type: "message", id: `n${rng.int(count)}`, parentId, timestamp: "t" }); // some ids twice
      }
      const byId = new Map(heads.map((head) => [head.id, head]));
      for (const leaf of [...heads, undefined]) expect(pathToRoot(leaf, byId)).toEqual(remembering(leaf, byId));
    }
  });
});
