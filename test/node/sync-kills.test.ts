/**
 * `sessionkit sync --to DIR` (node-fs into node-fs) killed with SIGKILL at random points while the
 * agents write (test/shared/sync-kills.ts): every copied file stays a prefix of a version of its
 * source, and the next sync run to its end leaves a byte-equal copy. 20 kills by default;
 * SESSIONKIT_SYNC_KILLS sets another number.
 */
import { watch } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { bundleCli } from "../shared/cli-runner.js";
import { mulberry32 } from "../shared/prng.js";
import { killDuringSync } from "../shared/sync-kills.js";
import { SimulatedMachine } from "../shared/sync-machine.js";

const KILLS = Number(process.env.SESSIONKIT_SYNC_KILLS ?? 20);
const SEED = 0x5eed5;

let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-sync-kills-"));
  bundle = await bundleCli(dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("sessionkit sync killed at random points", () => {
  it(`into a directory: ${KILLS} SIGKILLs, each copy a prefix of its source after each, byte-equal after a run to the end`, async () => {
    const rng = mulberry32(SEED);
    const machine = new SimulatedMachine(join(dir, "home"), rng);
    await machine.populate(40, 40, 1500);
    const team = join(dir, "team");
    await mkdir(team);
    const report = await killDuringSync({
      bundle,
      machine,
      name: "alice",
      cacheDir: join(dir, "cache"),
      kills: KILLS,
      rng,
      entryBytes: 1500,
      target: {
        args: ["--to", team],
        copyOf: (store) => nodeFsStorage({ root: join(team, "machines", "alice", store) }),
        async watchChanges(onChange) {
          const watcher = watch(team, { recursive: true }, onChange);
          return async () => watcher.close();
        },
      },
    });
    console.info(`sync into a directory: ${report.kills} kills (${report.killsMidCopy} left a copy behind its source), ${report.completedRuns} runs ended before their kill, ${report.checkedRuns} runs to the end checked byte-equal (seed ${SEED})`);
    expect(report.kills).toBe(KILLS);
    expect(report.killsMidCopy).toBeGreaterThan(0);
  });
});
