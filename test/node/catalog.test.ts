/**
 * The catalog stays small: a bounded summary per session (first message and name capped, no
 * message text), whatever the sessions hold; pi's whole texts come only with `withText`. And
 * scanJsonl's line spans, which the search index keeps to read an entry back.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { scanJsonl, type LineSpan } from "../../src/format/jsonl-reader.js";
import { SessionManager } from "../../src/index.js";

const DIR = "sessions/--cat--";
const encode = (text: string) => new TextEncoder().encode(text);
const header = { type: "session", version: 3, id: "cat-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/cat" };

/** The catalog file as stored (only what the tests edit is typed). */
type StoredCatalog = { version: unknown; files: Record<string, Record<string, unknown> & { summary: Record<string, unknown> }> };

/**
 * One session "the real first message" listed (so its catalog is written), the catalog file
 * replaced by what `edit` makes of it, then listed again: the session as the second listing gives it.
 */
async function listedAfterEditingCatalog(edit: (catalog: StoredCatalog) => unknown) {
  const storage = memoryStorage();
  await storage.write(`${DIR}/one.jsonl`, encode([header, message("u1", null, "user", "the real first message")].map((r) => JSON.stringify(r)).join("\n") + "\n"));
  await SessionManager.list(storage, "", { sessionDir: DIR });
  const catalogFile = `${CATALOG_DIR}/${encodeURIComponent(DIR)}.json`;
  const catalog = JSON.parse(new TextDecoder().decode((await storage.read(catalogFile))!)) as StoredCatalog;
  await storage.write(catalogFile, encode(JSON.stringify(edit(catalog))));
  const [info] = await SessionManager.list(storage, "", { sessionDir: DIR });
  return info;
}
const message = (id: string, parentId: string | null, role: "user" | "assistant", text: string) => ({
  type: "message",
  id,
  parentId,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: role === "user" ? { role, content: text, timestamp: 1 } : { role, content: [{ type: "text", text }], timestamp: 2 },
});

describe("the catalog", () => {
  it("keeps a bounded summary: its size does not grow with the text, and pi's texts come with withText", async () => {
    const storage = memoryStorage();
    const first = "é".repeat(10_000);
    const records: object[] = [header, message("u1", null, "user", first), { type: "session_info", id: "n1", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z", name: "N".repeat(5000) }];
    for (let i = 0; i < 200; i++) records.push(message(`a${i}`, i === 0 ? "n1" : `a${i - 1}`, "assistant", `answer ${i} ${"x".repeat(5000)}`));
    await storage.write(`${DIR}/big.jsonl`, encode(records.map((r) => JSON.stringify(r)).join("\n") + "\n"));
    const [info] = await SessionManager.list(storage, "", { sessionDir: DIR });
    expect(info!.firstMessage).toBe(first.slice(0, 4096));
    expect(info!.name).toBe("N".repeat(1024));
    expect(info!.messageCount).toBe(201);
    expect("allMessagesText" in info!).toBe(false);
    const catalog = (await storage.read(`${CATALOG_DIR}/${encodeURIComponent(DIR)}.json`))!;
    expect(catalog.length).toBeLessThan(4096 * 2 + 1024 + 2000); // the capped texts (é is 2 bytes), the header, counts
    expect(new TextDecoder().decode(catalog)).not.toContain("answer 1");

    const [full] = await SessionManager.list(storage, "", { sessionDir: DIR, withText: true });
    expect(full!.firstMessage).toBe(first);
    expect(full!.allMessagesText).toBe([first, ...Array.from({ length: 200 }, (_, i) => `answer ${i} ${"x".repeat(5000)}`)].join(" "));
    expect({ ...full, allMessagesText: undefined, firstMessage: "" }).toEqual({ ...info, allMessagesText: undefined, firstMessage: "" });
  });

  it("is rebuilt, not trusted, when an entry does not have its shape", async () => {
    // Size and mtime still match the file: only the schema can tell this entry is not to be used.
    const info = await listedAfterEditingCatalog((catalog) => {
      catalog.files["one.jsonl"]!.summary = { ...catalog.files["one.jsonl"]!.summary, messageCount: "1", firstMessage: "tampered" };
      return catalog;
    });
    expect(info!.firstMessage).toBe("the real first message");
    expect(info!.messageCount).toBe(1);
  });

  // Each damage beside a tampered first message: a catalog trusted in spite of it would list "tampered".
  it.each<[string, (catalog: StoredCatalog) => unknown]>([
    ["another version", (catalog) => ({ ...catalog, version: 3 })],
    ["files as an array", (catalog) => ({ ...catalog, files: Object.values(catalog.files) })],
    ["an entry without its fingerprint", (catalog) => ({ ...catalog, files: { "one.jsonl": { ...catalog.files["one.jsonl"], fingerprint: undefined } } })],
    ["an entry whose size is a string", (catalog) => ({ ...catalog, files: { "one.jsonl": { ...catalog.files["one.jsonl"], size: "1" } } })],
    ["a summary whose validity is not a boolean", (catalog) => ({ ...catalog, files: { "one.jsonl": { ...catalog.files["one.jsonl"], summary: { ...catalog.files["one.jsonl"]!.summary, valid: 1 } } } })],
    ["a summary that is not an object", (catalog) => ({ ...catalog, files: { "one.jsonl": { ...catalog.files["one.jsonl"], summary: "tampered" } } })],
    ["JSON that is not an object", () => null],
  ])("is rebuilt, not trusted, with %s", async (_, damage) => {
    const info = await listedAfterEditingCatalog((catalog) => {
      catalog.files["one.jsonl"]!.summary.firstMessage = "tampered";
      return damage(catalog);
    });
    expect(info!.firstMessage).toBe("the real first message");
  });

  it("is trusted when whole: a tampered first message with every field of its type is listed", async () => {
    const info = await listedAfterEditingCatalog((catalog) => {
      catalog.files["one.jsonl"]!.summary.firstMessage = "tampered";
      return catalog;
    });
    expect(info!.firstMessage).toBe("tampered");
  });
});

describe("scanJsonl line spans", () => {
  it("give each line's byte offset and length, across ranges and multi-byte characters", async () => {
    const storage = memoryStorage();
    const lines = ['{"a":"é→🚀"}', "", '{"b":1}', '{"c":"' + "ü".repeat(3000) + '"}', '{"d":2}{"e":3}', '{"tail":true}'];
    const bytes = encode(lines.join("\n"));
    await storage.write("f.jsonl", bytes);
    for (const chunkSize of [1, 7, 64, 4096, 1 << 20]) {
      const seen: [string, LineSpan][] = [];
      await scanJsonl(storage, "f.jsonl", (record, _line, _text, at) => seen.push([Object.keys(record)[0]!, at]), { chunkSize });
      for (const [key, at] of seen) {
        const line = new TextDecoder().decode(bytes.subarray(at.offset, at.offset + at.length));
        expect(line, `${key} at chunk size ${chunkSize}`).toContain(`"${key}"`);
        expect(at.offset === 0 || bytes[at.offset - 1] === 0x0a).toBe(true);
        expect(at.offset + at.length === bytes.length || bytes[at.offset + at.length] === 0x0a).toBe(true);
      }
      expect(seen.map(([key]) => key)).toEqual(["a", "b", "c", "d", "e", "tail"]);
    }
  });
});
