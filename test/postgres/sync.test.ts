/**
 * `sessionkit sync --to postgres://…` on the run's private cluster:
 * - killed with SIGKILL at random points while the agents write (test/shared/sync-kills.ts);
 * - a team store as docs/postgres.md sets it up (its roles-and-grants SQL run as written, in a
 *   database `team`): two simulated machines (a $HOME each, with pi's and oh-my-pi's stores), one
 *   syncing with --watch and one once, as the writer role; `serve --store` as the viewer role
 *   showing both machines' stores, their sessions, search across them, and an agent's append
 *   live (the lag is printed); the viewer cannot write;
 * - the sync's connections ended by the server: it keeps running, and the next append arrives;
 * - pg_dump of the team store, pg_restore into another database: the same stores, sessions and
 *   bytes, and a sync into the restored store puts back what came after the dump.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { subtreeStorage } from "../../adapters/subtree.js";
import { searchSessions } from "../../src/search/search.js";
import { listAllSessions } from "../../src/session/listing.js";
import { bundleCli, REPO, runCli, type CliResult } from "../shared/cli-runner.js";
import { startCli, startServe, type LongRunning, type Served } from "../shared/cli-processes.js";
import { mulberry32 } from "../shared/prng.js";
import { killDuringSync } from "../shared/sync-kills.js";
import { MACHINE_STORES, SimulatedMachine, type MachineStoreName } from "../shared/sync-machine.js";
import { findServerBinaries } from "./cluster.js";
import { dropSchema, freshSchema, pgUrl, sql, waitFor } from "./helpers.js";

const KILLS = Number(process.env.SESSIONKIT_SYNC_KILLS ?? 20);
const SEED = 0x5eed6;
const STORES = Object.keys(MACHINE_STORES) as MachineStoreName[];

let dir: string;
let bundle: string;
const ports: PostgresStorage[] = [];
const processes: LongRunning[] = [];

/** The cluster's URL as `user`, on database `db` (trust authentication: any role logs in). */
function urlAs(user: string, db: string, schema?: string): string {
  const url = new URL(pgUrl());
  url.username = user;
  url.pathname = `/${db}`;
  if (schema !== undefined) url.searchParams.set("schema", schema);
  return url.toString();
}

function port(url: string, schema = "sessionkit"): PostgresStorage {
  const storage = postgresStorage({ connection: url, schema });
  ports.push(storage);
  return storage;
}

const syncAs = (machine: SimulatedMachine, args: string[]): Promise<CliResult> => runCli(bundle, ["sync", ...args], { env: { HOME: machine.home, XDG_CACHE_HOME: join(dir, "cache") } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-pg-sync-"));
  bundle = await bundleCli(dir);
});

afterAll(async () => {
  for (const running of processes) await running.stop();
  await Promise.all(ports.map((storage) => storage.close()));
  await rm(dir, { recursive: true, force: true });
});

describe("sessionkit sync into PostgreSQL, killed at random points", () => {
  const schema = freshSchema("sync_kills");
  afterAll(() => dropSchema(schema));

  it(`${KILLS} SIGKILLs: each copy a prefix of its source after each, byte-equal after a run to the end`, async () => {
    const rng = mulberry32(SEED);
    const machine = new SimulatedMachine(join(dir, "killed"), rng);
    await machine.populate(30, 30, 1500);
    const base = port(pgUrl(), schema);
    const report = await killDuringSync({
      bundle,
      machine,
      name: "alice",
      cacheDir: join(dir, "cache"),
      kills: KILLS,
      rng,
      entryBytes: 1500,
      target: {
        args: ["--to", `${pgUrl()}?schema=${schema}`],
        copyOf: (store) => subtreeStorage(base, `machines/alice/${store}`),
        async watchChanges(onChange) {
          const client = new pg.Client(pgUrl());
          await client.connect();
          client.on("notification", onChange);
          await client.query(`LISTEN ${schema}_changes`);
          return () => client.end();
        },
      },
    });
    console.info(`sync into postgres: ${report.kills} kills (${report.killsMidCopy} left the copy behind its source), ${report.completedRuns} runs ended before their kill, ${report.checkedRuns} runs to the end checked byte-equal (seed ${SEED})`);
    expect(report.kills).toBe(KILLS);
    expect(report.killsMidCopy).toBeGreaterThan(0);
  });
});

describe("a team store: two machines sync, one serve shows them", () => {
  let alice: SimulatedMachine;
  let bob: SimulatedMachine;
  let aliceSync: LongRunning;
  let served: Served;
  const writer = () => urlAs("sessionkit_writer", "team");

  beforeAll(async () => {
    // docs/postgres.md's roles and grants, run as written: the superuser's part, the schema made
    // by the owner's first command, the owner's part.
    const docs = await readFile(join(REPO, "docs/postgres.md"), "utf8");
    const block = /## Roles and grants[\s\S]*?```sql\n([\s\S]*?)```/.exec(docs)![1]!;
    const [asSuperuser, asOwner] = block.split(/^-- Then create the schema.*$/m) as [string, string];
    await sql("CREATE DATABASE team");
    await runAs("postgres", "team", asSuperuser);
    const created = await runCli(bundle, ["--store", urlAs("sessionkit_owner", "team"), "ls", "--all"], { env: { XDG_CACHE_HOME: join(dir, "cache") } });
    expect(created).toMatchObject({ code: 0 });
    await runAs("sessionkit_owner", "team", asOwner);

    alice = new SimulatedMachine(join(dir, "alice"), mulberry32(1));
    bob = new SimulatedMachine(join(dir, "bob"), mulberry32(2));
    await alice.populate(5, 15, 600);
    await bob.populate(4, 15, 600);
  });

  afterAll(async () => {
    await aliceSync?.stop();
    await served?.stop();
  });

  it("as the writer role: one machine syncs with --watch, the other once", async () => {
    aliceSync = await startCli(bundle, ["sync", "--to", writer(), "--as", "alice", "--watch"], { HOME: alice.home, XDG_CACHE_HOME: join(dir, "cache") }, /sessionkit: sync: watching/);
    processes.push(aliceSync);
    const once = await syncAs(bob, ["--to", writer(), "--as", "bob"]);
    expect(once).toMatchObject({ code: 0, stderr: "" });
    expect(once.stdout).toMatch(/^synced 8 sessions \(8 new, 0 appended, 0 rewritten; \d+ blobs\), \d+\.\d MB in \d+\.\d s\n$/);
    const owner = port(urlAs("postgres", "team"));
    for (const [machine, name] of [[alice, "alice"], [bob, "bob"]] as const) {
      for (const store of STORES) await machine.check(store, subtreeStorage(owner, `machines/${name}/${store}`), true);
    }
  });

  it("serve --store as the viewer role: each machine's stores, their sessions, search across them; the viewer cannot write", async () => {
    served = await startServe(bundle, ["--store", urlAs("sessionkit_viewer", "team")], { XDG_CACHE_HOME: join(dir, "cache") });
    processes.push(served);
    const stores = await served.stores();
    expect(stores.map((store) => [store.label, store.agent, store.readOnly]).sort()).toEqual([
      ["alice · omp", "omp", true],
      ["alice · pi", "pi", true],
      ["bob · omp", "omp", true],
      ["bob · pi", "pi", true],
    ]);
    // A word said on each machine: alice's entry comes through her --watch, bob's through a sync.
    const word = "zanzibarquokka";
    const aliceSession = alice.sessions("pi")[0]!;
    const aliceLine = await alice.say("pi", aliceSession, `where is the ${word} config`);
    await bob.say("omp", bob.sessions("omp")[0]!, `the ${word} lives in bob's repo`);
    expect((await syncAs(bob, ["--to", writer(), "--as", "bob"])).code).toBe(0);
    const idOf = (label: string) => stores.find((store) => store.label === label)!.id;
    await waitFor("alice's entry through serve", async () => ((await served.file(idOf("alice · pi"), aliceSession))?.endsWith(aliceLine) ? true : undefined));
    const hits: string[] = [];
    for (const [machine, name] of [[alice, "alice"], [bob, "bob"]] as const) {
      for (const store of STORES) {
        const client = clientOf(served, idOf(`${name} · ${store}`));
        expect((await listAllSessions(client)).map((info) => info.path).sort()).toEqual(machine.sessions(store).sort());
        for (const hit of await searchSessions(client, word)) hits.push(`${name} · ${store}: ${hit.snippet}`);
        await client.close();
      }
    }
    expect(hits).toEqual([expect.stringMatching(/^alice · pi: .*zanzibarquokka/), expect.stringMatching(/^bob · omp: .*zanzibarquokka/)]);

    const refused = await syncAs(bob, ["--to", urlAs("sessionkit_viewer", "team"), "--as", "bob-as-viewer"]);
    // Its first write is the machine's sync lock (a row of `locks`), or a file where locks are not rows.
    expect([refused.code, refused.stderr]).toEqual([4, expect.stringMatching(/permission denied for table (locks|files)/)]);
    await expect(port(urlAs("sessionkit_viewer", "team")).append("machines/x/pi/sessions/a/b.jsonl", new TextEncoder().encode("{}\n"))).rejects.toMatchObject({ code: "io", message: expect.stringContaining("permission denied") });
  });

  it("an agent's append on a machine reaches the team page live: the lag, append to readable through serve", async () => {
    const stores = await served.stores();
    const id = stores.find((store) => store.label === "alice · pi")!.id;
    const lags: number[] = [];
    for (let i = 0; i < 8; i++) {
      const session = alice.sessions("pi")[i % 5]!;
      const line = await alice.say("pi", session, `live entry ${i}`);
      const appended = performance.now();
      await waitFor(`entry ${i} through serve`, async () => ((await served.file(id, session))?.endsWith(line) ? true : undefined), 10_000);
      lags.push(performance.now() - appended);
    }
    lags.sort((a, b) => a - b);
    console.info(`team store: an agent's append on a machine (sync --watch) was readable through serve ${lags.map((ms) => ms.toFixed(0)).join(", ")} ms later (median ${lags[lags.length >> 1]!.toFixed(0)} ms)`);
    expect(lags.at(-1)!).toBeLessThanOrEqual(2000);
  });

  it("the sync's connections ended by the server: it keeps running, and the next append arrives", async () => {
    const stores = await served.stores();
    const id = stores.find((store) => store.label === "alice · omp")!.id;
    const ended = await sql<{ ended: boolean }>("SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1", [`sessionkit pid ${aliceSync.child.pid}`]);
    expect(ended.length).toBeGreaterThan(0);
    const session = alice.sessions("omp")[0]!;
    const line = await alice.say("omp", session, "after the connection was cut");
    const appended = performance.now();
    await waitFor("the append after the cut, through serve", async () => ((await served.file(id, session))?.endsWith(line) ? true : undefined), 30_000);
    console.info(`team store: with the sync's connections ended by the server, an append arrived ${(performance.now() - appended).toFixed(0)} ms later`);
    expect(aliceSync.child.exitCode).toBeNull();
    await alice.check("omp", subtreeStorage(port(urlAs("postgres", "team")), "machines/alice/omp"), true);
  });

  it("pg_dump of the team store, pg_restore into another database: the same stores, sessions and bytes; sync puts back what came after", async () => {
    expect(await aliceSync.stop()).toBe(0);
    const bin = await findServerBinaries();
    const run = promisify(execFile);
    const dump = join(dir, "team.dump");
    await run(join(bin, "pg_dump"), ["--format=custom", "--schema=sessionkit", `--file=${dump}`, urlAs("postgres", "team")]);
    await sql("CREATE DATABASE team_restored");
    await run(join(bin, "pg_restore"), [`--dbname=${urlAs("postgres", "team_restored")}`, dump]);

    const original = port(urlAs("postgres", "team"));
    const restored = port(urlAs("postgres", "team_restored"));
    for (const name of ["alice", "bob"]) {
      for (const store of STORES) {
        const [was, is] = [subtreeStorage(original, `machines/${name}/${store}`), subtreeStorage(restored, `machines/${name}/${store}`)];
        const listed = await listAllSessions(was, { catalog: false });
        expect(await listAllSessions(is, { catalog: false })).toEqual(listed);
        for (const info of listed) expect(await is.read(info.path)).toEqual(await was.read(info.path));
      }
    }
    // The grants came back with the schema: the viewer serves the restored store.
    const replay = await startServe(bundle, ["--store", urlAs("sessionkit_viewer", "team_restored")], { XDG_CACHE_HOME: join(dir, "cache") });
    expect((await replay.stores()).map((store) => store.label).sort()).toEqual(["alice · omp", "alice · pi", "bob · omp", "bob · pi"]);
    await replay.stop();

    // Appended after the dump, then synced into the restored store: put back on top of what it holds.
    await alice.append("pi", alice.sessions("pi")[2]!, 3, 500);
    const synced = await syncAs(alice, ["--to", urlAs("postgres", "team_restored"), "--as", "alice"]);
    expect(synced.stdout).toMatch(/\(0 new, \d+ appended, 0 rewritten/);
    for (const store of STORES) await alice.check(store, subtreeStorage(restored, `machines/alice/${store}`), true);
  });
});

/** Runs the statements of `text` as `user` on database `db`. */
async function runAs(user: string, db: string, text: string): Promise<void> {
  const client = new pg.Client(urlAs(user, db));
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function clientOf(served: Served, store: string) {
  return httpStorage({ url: served.url.origin, token: served.token, store, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
}
