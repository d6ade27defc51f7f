/**
 * What a consumer's page does with the installed package: on IndexedDB and on OPFS, a session is
 * written, flushed, reopened on a new port and read back, then searched for its word (the page's
 * ?word=). The outcome goes to globalThis.sessionkitResult for the test to read.
 */
import { SessionManager, searchSessions } from "sessionkit";
import { indexedDbStorage } from "sessionkit/adapters/indexeddb";
import { opfsStorage } from "sessionkit/adapters/opfs";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

const textOf = (content) => (typeof content === "string" ? content : content.map((part) => part.text ?? "").join(""));

/** Writes a session on one port, reopens it on another port of the same store, searches it there. */
async function roundTrip(openPort, word) {
  const writing = openPort();
  const sm = await SessionManager.create(writing, "/work/consumer");
  sm.appendMessage({ role: "user", content: `where is the ${word}`, timestamp: Date.now() });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `the ${word} is here` }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
  await sm.flush();
  const path = sm.getSessionFile();
  await sm.close();
  await writing.close();

  const reading = openPort();
  try {
    const reopened = await SessionManager.open(reading, path);
    const context = reopened.buildSessionContext().messages.map((message) => ({ role: message.role, text: textOf(message.content) }));
    await reopened.close();
    const hits = (await searchSessions(reading, word)).map((hit) => ({ path: hit.path, role: hit.role }));
    return { path, context, hits };
  } finally {
    await reading.close();
  }
}

export async function runChecks(opfsOptions = {}) {
  const word = new URL(location.href).searchParams.get("word");
  try {
    const indexeddb = await roundTrip(() => indexedDbStorage({ dbName: `consumer-${word}` }), `${word}idb`);
    const opfs = await roundTrip(() => opfsStorage({ root: `consumer-${word}`, ...opfsOptions }), `${word}opfs`);
    globalThis.sessionkitResult = { indexeddb, opfs };
  } catch (error) {
    globalThis.sessionkitResult = { error: String(error?.stack ?? error) };
  }
}
