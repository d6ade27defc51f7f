/**
 * Two `sessionkit serve --store postgres://…` processes on one database: a session appended
 * through one reaches a follower connected to the other (its watch is LISTEN/NOTIFY in the server).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpStorage, type HttpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { SessionManager, type FollowUpdate } from "../../src/index.js";
import { bundleCli } from "../shared/cli-runner.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dropSchema, freshSchema, pgUrl, waitFor } from "./helpers.js";

const schema = freshSchema("serve");
let dir: string;
let bundle: string;
const servers: ChildProcess[] = [];
const clients: HttpStorage[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-pg-serve-"));
  bundle = await bundleCli(dir);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  for (const child of servers) {
    if (child.exitCode !== null) continue;
    child.kill("SIGINT");
    await once(child, "exit");
  }
  await dropSchema(schema);
  await rm(dir, { recursive: true, force: true });
});

/** Starts `sessionkit serve --store … --write --port 0`; resolves with a client of its store. */
async function serve(): Promise<HttpStorage> {
  const child = spawn(process.execPath, [bundle, "--store", `${pgUrl()}?schema=${schema}`, "serve", "--write", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  servers.push(child);
  let stderr = "";
  child.stderr!.on("data", (part: Buffer) => (stderr += part.toString()));
  let stdout = "";
  while (!stdout.includes("\n")) {
    const [part] = (await Promise.race([
      once(child.stdout!, "data"),
      once(child, "exit").then(() => {
        throw new Error(`serve exited: ${stderr}`);
      }),
    ])) as [Buffer];
    stdout += part.toString();
  }
  const url = new URL(stdout.slice("sessionkit serve: ".length).trim());
  const token = url.searchParams.get("token")!;
  const stores = (await (await fetch(new URL(`/api/stores?token=${token}`, url))).json()) as { id: string; readOnly: boolean }[];
  expect(stores).toHaveLength(1);
  expect(stores[0]!.readOnly).toBe(false);
  expect(stderr).toContain(`schema=${schema} (writable)`);
  const client = httpStorage({ url: url.origin, token, store: stores[0]!.id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
  clients.push(client);
  return client;
}

describe("sessionkit serve --store postgres://…", () => {
  it("two servers on one database: an append through one reaches a follower on the other", async () => {
    const [first, second] = await Promise.all([serve(), serve()]);

    const writer = await SessionManager.create(first, "/served/by/postgres");
    writer.appendMessage(userMsg("hello"));
    writer.appendMessage(assistantMsg("hi"));
    await writer.flush();
    const path = writer.getSessionFile()!;

    const follower = await SessionManager.open(second, path, { readOnly: true });
    expect(follower.getEntries()).toHaveLength(2);
    const updates: FollowUpdate[] = [];
    const follow = await follower.follow((update) => updates.push(update));

    const flushed: number[] = [];
    const heard = new Map<string, number>();
    for (let i = 0; i < 5; i++) {
      const id = writer.appendMessage(userMsg(`through the first server ${i}`));
      await writer.flush();
      flushed.push(performance.now());
      await waitFor(`entry ${i} at the follower`, () => (follower.getEntry(id) ? true : undefined));
      heard.set(id, performance.now() - flushed[i]!);
    }
    const latencies = [...heard.values()].sort((a, b) => a - b);
    console.info(`serve on postgres: appends reached the other server's follower ${latencies.map((ms) => ms.toFixed(0)).join(", ")} ms after their flush`);
    expect(follower.getEntries().map((entry) => entry.id)).toEqual(writer.getEntries().map((entry) => entry.id));
    expect(updates.every((update) => update.kind === "appended")).toBe(true);

    await follow.close();
    await follower.close();
    await writer.close();
  });
});
