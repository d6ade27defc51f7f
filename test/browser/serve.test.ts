/**
 * Over `sessionkit serve` from a Chromium page: a real server started by the test (a browser
 * command runs it in Node), the page's httpStorage on the browser's own WebSocket and fetch.
 */
import { afterAll, describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { httpStorage, listServedStores } from "../../adapters/rpc/http.js";
import { SessionManager, type FollowUpdate } from "../../src/index.js";
import { countingPort } from "../shared/counting-port.js";
import { describeFollowSuite } from "../shared/follow-suite.js";
import { describePortConformance, waitFor } from "../../src/testing/index.js";
import { below } from "../shared/prefixed-port.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";

const started: string[] = [];
afterAll(async () => {
  for (const origin of started) await commands.stopServe(origin);
});

async function served(write = true) {
  const server = await commands.startServe({ write });
  started.push(server.origin);
  const ports: ReturnType<typeof httpStorage>[] = [];
  const client = () => {
    const port = httpStorage({ url: server.origin, token: server.token, store: server.store });
    ports.push(port);
    return port;
  };
  return { server, client, cleanup: async () => void (await Promise.all(ports.map((port) => port.close().catch(() => {})))) };
}

describePortConformance(
  "http (sessionkit serve --write, Chromium's WebSocket)",
  async () => {
    const { client, cleanup } = await served();
    return { port: below("sessions", client()), openSecond: async () => below("sessions", client()), cleanup };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

describeSessionManagerSuite(
  "http (sessionkit serve --write, from Chromium)",
  async () => {
    const { client, cleanup } = await served();
    const storage = client();
    return {
      storage,
      reopen: async () => {
        await storage.close();
        return client();
      },
      openSecond: async () => client(),
      cleanup,
    };
  },
  { persistent: true },
);

describeFollowSuite("http from Chromium (writer and follower on two sockets)", async () => {
  const { client, cleanup } = await served();
  return { writer: client(), reader: client(), cleanup };
});

describe("following a session over serve while another process writes it", () => {
  it("every entry a child process flushes appears in the page within 1 s; the page reads the appends, not the file", async () => {
    const { server } = await served(false);
    expect(await listServedStores({ url: server.origin, token: server.token })).toEqual([{ id: server.store, label: server.root, readOnly: true }]);
    const writer = await commands.startWriter(server.root, 2_000_000, 40, 50);
    const { port, counter } = countingPort(httpStorage({ url: server.origin, token: server.token, store: server.store }));
    const sm = await SessionManager.open(port, writer.path, { readOnly: true });
    const loadedBytes = counter.bytesRead;
    const arrivals = new Map<string, number>();
    const follow = await sm.follow((update: FollowUpdate) => {
      if (update.kind === "appended") for (const entry of update.entries) arrivals.set(entry.id, Date.now());
    });
    await commands.continueWriter(writer.pid);
    const flushes = await commands.finishWriter(writer.pid);
    await waitFor(() => flushes.every((flush) => arrivals.has(flush.id)), () => `all ${flushes.length} entries (have ${arrivals.size})`);
    await follow.close();

    const latencies = flushes.map((flush) => arrivals.get(flush.id)! - flush.flushedAt);
    const appendedBytes = flushes.at(-1)!.size - writer.bytes;
    const followedBytes = counter.bytesRead - loadedBytes;
    console.log(
      `follow over serve: ${flushes.length} entries, latency after flush median ${median(latencies)} ms, max ${Math.max(...latencies)} ms; ` +
        `read while following ${followedBytes} bytes for ${appendedBytes} appended (file ${flushes.at(-1)!.size} bytes, load read ${loadedBytes})`,
    );
    for (const latency of latencies) expect(latency).toBeLessThanOrEqual(1000);
    expect(sm.getEntries().slice(-flushes.length).map((entry) => entry.id)).toEqual(flushes.map((flush) => flush.id));
    expect(followedBytes).toBeGreaterThanOrEqual(appendedBytes);
    expect(followedBytes).toBeLessThan(appendedBytes + counter.reads * 512);
    expect(followedBytes).toBeLessThan(writer.bytes / 10);
    await port.close!();
  });
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}
