/**
 * oh-my-pi's memory-session-storage.test.ts (section B, a later API), ported to our
 * `memoryStorage()` StoragePort: `writeLineSync` → `append`, `readTextSync` → `read`,
 * `readTextPrefix(path, n)` → `read(path, {offset: 0, length: n})`, `statSync` → `stat`,
 * `writeTextSync` → `write`.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

describe("MemorySessionStorage", () => {
  it("1000 appended lines read back as their concatenation", async () => {
    const storage = memoryStorage();
    const lines = Array.from({ length: 1000 }, (_, i) => `${JSON.stringify({ i, text: `line ${i}` })}\n`);
    for (const line of lines) await storage.append("sessions/a.jsonl", encode(line));
    expect(decode(await storage.read("sessions/a.jsonl"))).toBe(lines.join(""));
  });

  it("stat size is the UTF-8 byte length", async () => {
    const storage = memoryStorage();
    const text = "héllo\n日本語\n";
    await storage.append("sessions/u.jsonl", encode(text));
    expect((await storage.stat("sessions/u.jsonl"))?.size).toBe(Buffer.byteLength(text, "utf8"));
    expect(Buffer.byteLength(text, "utf8")).toBeGreaterThan(text.length);
  });

  it("readTextPrefix returns the first bytes", async () => {
    const storage = memoryStorage();
    for (const line of ["alpha\n", "bravo\n", "charlie\n"]) await storage.append("sessions/p.jsonl", encode(line));
    expect(decode(await storage.read("sessions/p.jsonl", { offset: 0, length: 10 }))).toBe("alpha\nbrav");
  });

  it("appending after reading still works", async () => {
    const storage = memoryStorage();
    await storage.append("sessions/r.jsonl", encode("one\n"));
    expect(decode(await storage.read("sessions/r.jsonl"))).toBe("one\n");
    await storage.append("sessions/r.jsonl", encode("two\n"));
    expect(decode(await storage.read("sessions/r.jsonl"))).toBe("one\ntwo\n");
  });

  it("writeTextSync overwrites", async () => {
    const storage = memoryStorage();
    await storage.write("sessions/w.jsonl", encode("abcdef"));
    expect((await storage.stat("sessions/w.jsonl"))?.size).toBe(6);
    await storage.write("sessions/w.jsonl", encode("gh"));
    expect((await storage.stat("sessions/w.jsonl"))?.size).toBe(2);
    expect(decode(await storage.read("sessions/w.jsonl"))).toBe("gh");
  });
});
