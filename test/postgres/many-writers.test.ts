/**
 * Many writer processes on one database: four processes writing 25 sessions each at once, a
 * second writer of one session refused at once, and a killed writer's lock freed within a second.
 */
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { SessionManager, isStorageError } from "../../src/index.js";
import { userMsg } from "../shared/messages.js";
import { dropSchema, freshSchema, openStorage, pgUrl } from "./helpers.js";
import { runManyWriters, startWriter } from "./many-writers.js";

const schema = freshSchema("writers");
let storage: PostgresStorage;

beforeAll(() => {
  storage = openStorage(schema);
});

afterAll(async () => {
  await storage.close();
  await dropSchema(schema);
});

describe("many writers", () => {
  it("four processes write 25 sessions each at once, flushing every 4 entries: every session reads back whole and valid", async () => {
    const entries = 40;
    const result = await runManyWriters(pgUrl(), schema, { processes: 4, sessions: 25, entries, flushEvery: 4 });
    console.info(`many writers: ${result.entries} entries in ${result.ms.toFixed(0)} ms, ${result.entriesPerSecond.toFixed(0)} entries/s`);

    const paths = result.paths.flat();
    expect(paths).toHaveLength(100);
    expect(new Set(paths).size).toBe(100);
    for (const path of paths) {
      const sm = await SessionManager.open(storage, path, { readOnly: true });
      expect(sm.getLoadProblems(), path).toEqual([]);
      const texts = sm.getEntries().map((entry) => {
        const content = (entry as { message?: { content: unknown } }).message?.content;
        return typeof content === "string" ? content : (content as { text: string }[])[0]!.text;
      });
      expect(texts).toHaveLength(entries);
      const session = /^session (\d+) /.exec(texts[0]!)![1];
      texts.forEach((text, i) => expect(text.startsWith(`session ${session} entry ${i}: `), `${path} entry ${i}`).toBe(true));
      await sm.close();
    }
  });

  it("a second process opening a session is refused at once; killing the first frees it within a second", async () => {
    const seed = await SessionManager.create(storage, "/locks");
    seed.appendMessage(userMsg("first"));
    seed.appendMessage({ ...userMsg("answer"), role: "assistant", content: [{ type: "text", text: "ok" }] } as never);
    await seed.flush();
    await seed.close();
    const path = seed.getSessionFile()!;

    const holder = startWriter(pgUrl(), schema, ["hold", path]);
    try {
      await holder.line((line) => line === "holding");
      const asked = performance.now();
      const refused = await SessionManager.open(storage, path).then(
        () => null,
        (error: unknown) => error,
      );
      const refusalMs = performance.now() - asked;
      expect(isStorageError(refused, "locked"), String(refused)).toBe(true);
      expect((refused as Error).message).toContain(`${path} is locked by sessionkit pid ${holder.child.pid} on ${hostname()} (backend pid`);
      expect(refusalMs).toBeLessThan(1000);

      const exited = new Promise((resolve) => holder.child.once("exit", resolve));
      const killed = performance.now();
      holder.child.kill("SIGKILL");
      let lock;
      while (!lock) {
        lock = await storage.acquireLock(path).catch((error: unknown) => {
          if (!isStorageError(error, "locked")) throw error;
          return undefined;
        });
        if (performance.now() - killed > 5000) break;
      }
      const freedMs = performance.now() - killed;
      console.info(`lock: refused in ${refusalMs.toFixed(1)} ms; freed ${freedMs.toFixed(1)} ms after SIGKILL`);
      expect(lock).toBeDefined();
      expect(freedMs).toBeLessThan(1000);
      await lock!.release();
      await exited;

      const reopened = await SessionManager.open(storage, path);
      expect(reopened.getEntries().map((entry) => (entry as { message: { content: unknown } }).message.content)).toContainEqual("held");
      await reopened.close();
    } finally {
      holder.child.kill("SIGKILL");
    }
  });
});
