/**
 * `sessionkit sync` as a real child process, into a directory: two simulated machines (a $HOME
 * each, with pi's and oh-my-pi's stores and a seed-003 profile) copied to
 * machines/<name>/<store>/ of one shared folder; what it prints; that it only reads the agents'
 * folders; --agent; --watch; the lock that keeps two syncs of one machine apart; its usage
 * errors; and `sessionkit serve --root` over the shared folder showing each machine's store as a
 * store of its own.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { listAllSessions } from "../../src/session/listing.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";
import { startCli, startServe } from "../shared/cli-processes.js";
import { mulberry32 } from "../shared/prng.js";
import { SimulatedMachine } from "../shared/sync-machine.js";
import { waitFor } from "../../src/testing/wait.js";

let dir: string;
let bundle: string;
let team: string;
let cache: string;
let alice: SimulatedMachine;
let bob: SimulatedMachine;
const PROFILE_SESSION = "2026-01-01T00-00-00-000000_11111111-2222-3333-4444-555555555555.jsonl";

const sync = (machine: SimulatedMachine, args: string[]): Promise<CliResult> => runCli(bundle, ["sync", ...args], { env: { HOME: machine.home, XDG_CACHE_HOME: cache } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-cli-sync-"));
  bundle = await bundleCli(dir);
  team = join(dir, "team");
  cache = join(dir, "cache");
  alice = new SimulatedMachine(join(dir, "alice"), mulberry32(1));
  bob = new SimulatedMachine(join(dir, "bob"), mulberry32(2));
  await alice.populate(4, 12, 400);
  await bob.populate(3, 12, 400);
  // A seed-003 profile: one flat sessions/ folder.
  const profile = join(alice.home, ".operator/profiles/work/sessions");
  await mkdir(profile, { recursive: true });
  await writeFile(join(profile, PROFILE_SESSION), `${JSON.stringify({ type: "session", id: "11111111-2222-3333-4444-555555555555", timestamp: "2026-01-01T00:00:00Z", cwd: "/work" })}\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("sessionkit sync --to DIR", () => {
  it("copies each agent store to machines/<name>/<store>/, reads the agents' folders only, and prints one summary line", async () => {
    const before = await alice.snapshot();
    const first = await sync(alice, ["--to", team, "--as", "alice"]);
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(/^synced 9 sessions \(9 new, 0 appended, 0 rewritten; \d+ blobs\), \d+\.\d MB in \d+\.\d s\n$/);
    expect(await readdir(join(team, "machines", "alice"))).toEqual(expect.arrayContaining(["omp", "operator-work", "pi"]));
    for (const store of ["pi", "omp"] as const) await alice.check(store, nodeFsStorage({ root: join(team, "machines", "alice", store) }), true);
    expect(await readdir(join(team, "machines", "alice", "operator-work", "sessions"))).toEqual([PROFILE_SESSION]);
    // Nothing but sessions and their blobs: no credentials, no file of ours in the agents' folders.
    expect(await readdir(join(team, "machines", "alice", "pi"))).toEqual(["sessions"]);
    expect(await alice.snapshot()).toEqual(before);
    expect((await readdir(join(cache, "sessionkit", "sync"))).filter((name) => name.startsWith("alice-"))).toHaveLength(3);

    await alice.append("pi", alice.sessions("pi")[0]!, 2, 300);
    await alice.retitle("omp", alice.sessions("omp")[1]!);
    const second = await sync(alice, ["--to", team, "--as", "alice"]);
    expect(second.stdout).toMatch(/^synced 9 sessions \(0 new, 1 appended, 1 rewritten\), 0\.\d MB in \d+\.\d s\n$/);
    for (const store of ["pi", "omp"] as const) await alice.check(store, nodeFsStorage({ root: join(team, "machines", "alice", store) }), true);
    expect((await sync(alice, ["--to", team, "--as", "alice"])).stdout).toMatch(/^synced 9 sessions \(0 new, 0 appended, 0 rewritten\), 0\.0 MB/);
  });

  it("--agent: that agent's stores only; --json: what it did, per store; no --as: the host name", async () => {
    const result = await sync(bob, ["--root", team, "--agent", "omp", "--json"]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { machine: string; stores: { agent: string; dir: string }[]; created: number };
    expect(summary).toMatchObject({ machine: os.hostname(), created: 3, stores: [{ agent: "omp", dir: `machines/${os.hostname()}/omp` }] });
    expect(await readdir(join(team, "machines", os.hostname()))).toEqual(["omp"]);
    await rm(join(team, "machines", os.hostname()), { recursive: true });
  });

  it("refuses what cannot be meant: no shared store, two, one inside an agent's folder, a bad name", async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /sync needs one shared store to copy into/],
      [["--to", team, "--root", team], /sync needs one shared store .*, got 2/],
      [["--to", "https://example.com/x"], /--to takes a postgres:\/\/ URL or a directory/],
      [["--to", team, "--as", "../x"], /--as must be a name/],
      [["--to", join(alice.home, ".pi/agent/team")], /is inside pi ~\/\.pi\/agent: sync never writes into an agent's folder/],
    ];
    for (const [args, message] of cases) {
      const result = await sync(alice, args);
      expect([result.code, result.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
  });

  it("--watch copies what an agent appends as it writes, stops on Ctrl+C with exit 0 and the summary; a second sync of the machine meanwhile is refused", async () => {
    const env = { HOME: alice.home, XDG_CACHE_HOME: cache };
    const watching = await startCli(bundle, ["sync", "--to", team, "--as", "alice", "--watch"], env, /sessionkit: sync: watching/);
    try {
      const copy = nodeFsStorage({ root: join(team, "machines", "alice", "pi") });
      const session = alice.sessions("pi")[1]!;
      const lags: number[] = [];
      for (let i = 0; i < 3; i++) {
        const added = await alice.append("pi", session, 1, 200);
        const appended = performance.now();
        await waitFor(async () => new TextDecoder().decode((await copy.read(session))!).endsWith(added), "the append in the copy");
        lags.push(performance.now() - appended);
      }
      console.info(`sync --watch into a directory: an append reached the copy after ${lags.map((ms) => ms.toFixed(0)).join(", ")} ms`);
      const newSession = await alice.newSession("omp", 3, 200);
      await waitFor(async () => (await nodeFsStorage({ root: join(team, "machines", "alice", "omp") }).stat(newSession)) !== null, "the new session in the copy");

      // The shared store refuses a write (a file where the session's folder must be): the pass
      // fails, is said, and is tried again until the store takes it.
      const projectDir = join(team, "machines", "alice", "pi", ...session.split("/").slice(0, -1));
      await rm(projectDir, { recursive: true });
      await writeFile(projectDir, "in the way");
      const blocked = await alice.append("pi", session, 1, 200);
      await waitFor(() => watching.stderr().includes("trying again in 1 s"), "the failed pass said");
      await rm(projectDir);
      await waitFor(async () => new TextDecoder().decode((await copy.read(session)) ?? new Uint8Array()).endsWith(blocked), "the append once the store takes it");

      const second = await sync(alice, ["--to", team, "--as", "alice"]);
      expect([second.code, second.stderr]).toEqual([4, expect.stringContaining("another sessionkit sync of alice into")]);
    } finally {
      expect(await watching.stop()).toBe(0);
    }
    // The pass after the failure copies whole every file of the folder that was in the way.
    expect(watching.stdout()).toMatch(/^synced 10 sessions \(\d+ new, 3 appended, 0 rewritten(; \d+ blobs?)?\), \d+\.\d MB in \d+\.\d s\n$/);
    for (const store of ["pi", "omp"] as const) await alice.check(store, nodeFsStorage({ root: join(team, "machines", "alice", store) }), true);
  });

  it("serve --root over the shared folder: each machine's store a store of its own, named by machine and store", async () => {
    expect((await sync(bob, ["--to", team, "--as", "bob"])).code).toBe(0);
    const served = await startServe(bundle, ["--root", team], { XDG_CACHE_HOME: cache });
    try {
      const stores = await served.stores();
      expect(stores.map((store) => [store.label, store.agent]).sort()).toEqual([
        ["alice · omp", "omp"],
        ["alice · operator-work", "operator"],
        ["alice · pi", "pi"],
        ["bob · omp", "omp"],
        ["bob · pi", "pi"],
      ]);
      for (const [machine, name] of [[alice, "alice"], [bob, "bob"]] as const) {
        for (const store of ["pi", "omp"] as const) {
          const id = stores.find((served) => served.label === `${name} · ${store}`)!.id;
          const client = httpStorage({ url: served.url.origin, token: served.token, store: id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
          const listed = await listAllSessions(client);
          await client.close();
          expect(listed.map((info) => info.path).sort()).toEqual(machine.sessions(store).sort());
        }
      }
    } finally {
      await served.stop();
    }
  });
});
