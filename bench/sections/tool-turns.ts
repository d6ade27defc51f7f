/**
 * Sessions of users' shape (issue 26): many small tool turns, a compaction every 500 entries,
 * every message a real one from the corpus (bench/lib/data.ts, bench/lib/corpus-turns.ts). Whole
 * processes, as a user runs them:
 *
 * - `sessionkit context FILE --json` of one ~51 MB such session against pi opening it, building
 *   the context and printing it as JSON (bench/lib/pi-context.mjs);
 * - `sessionkit --root STORE ls --all --json`, warm (its catalog written by an earlier call),
 *   over 300 such sessions in 10 projects (~244 MB), against pi's SessionManager.list of each
 *   project in one process (bench/lib/pi-list.mjs).
 */
import { rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { bundleCliInto } from "../../scripts/cli-bundle.js";
import { BENCH_DIR, SCRATCH_DIR, TOOL_TURNS_STORE_ROOT, ensureToolTurnsSession, ensureToolTurnsStore } from "../lib/data.js";
import { formatMs, summarize, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";
import { timeProcess } from "./open.js";

const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(" / ");

interface Contender {
  args: string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Each contender `runs` times, after one warm-up round (which fills the page cache and, for a
 * listing, writes its catalog); each round in another order. Returns the samples and what each
 * printed last.
 */
async function rounds<K extends string>(contenders: Record<K, Contender>, runs: number): Promise<Record<K, { sample: Sample; stdout: string }>> {
  const names = Object.keys(contenders) as K[];
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const printed = {} as Record<K, string>;
  for (let round = 0; round <= runs; round++) {
    for (const name of names.map((_, i) => names[(i + round) % names.length]!)) {
      const { ms, stdout } = await timeProcess(contenders[name].args, contenders[name].env);
      if (round > 0) times[name].push(ms);
      printed[name] = stdout;
    }
  }
  return Object.fromEntries(names.map((name) => [name, { sample: summarize(times[name]), stdout: printed[name] }])) as Record<K, { sample: Sample; stdout: string }>;
}

/** What both listings say of each session, by path: pi's fields that ours prints unchanged. */
function listedSessions(json: string): Map<string, string> {
  const infos = JSON.parse(json) as { path: string; id: string; cwd: string; name?: string; messageCount: number; created: string; modified: string }[];
  return new Map(infos.map((info) => [info.path, JSON.stringify([info.id, info.cwd, info.name ?? null, info.messageCount, info.created, info.modified])]));
}

export async function benchToolTurns(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const session = ensureToolTurnsSession();
  const store = ensureToolTurnsStore();
  const bin = await bundleCliInto(join(SCRATCH_DIR, "cli"));
  const cache = join(SCRATCH_DIR, "tool-turns-cache");
  rmSync(cache, { recursive: true, force: true });
  const cliEnv = { ...process.env, XDG_CACHE_HOME: cache };

  const loadBefore = load();
  const open = await rounds({ ours: { args: [bin, "context", session.path, "--json"] }, pi: { args: [join(BENCH_DIR, "lib/pi-context.mjs"), session.path] } }, runs);
  const loadBetween = load();
  const list = await rounds({ ours: { args: [bin, "--root", TOOL_TURNS_STORE_ROOT, "ls", "--all", "--json"], env: cliEnv }, pi: { args: [join(BENCH_DIR, "lib/pi-list.mjs"), TOOL_TURNS_STORE_ROOT] } }, runs);
  const loadAfter = load();

  const openRatio = open.ours.sample.median / open.pi.sample.median;
  const listRatio = list.ours.sample.median / list.pi.sample.median;
  const oursListed = listedSessions(list.ours.stdout);
  const piListed = listedSessions(list.pi.stdout);
  const differing = [...piListed].filter(([path, info]) => oursListed.get(path) !== info).length;
  const sameListing = oursListed.size === piListed.size && differing === 0;
  const sessionWhat = `${(session.size / 1e6).toFixed(1)} MB session of small tool turns`;
  const storeWhat = `${store.files} such sessions in 10 projects, ${(store.bytes / 1e6).toFixed(0)} MB`;
  return {
    rows: [
      {
        name: `users' shape, whole process: \`sessionkit context FILE --json\` of a ${sessionWhat} vs pi's open + buildSessionContext + JSON.stringify in a process`,
        ours: timing(open.ours.sample),
        peer: `pi ${timing(open.pi.sample)}`,
        ratio: ratio(openRatio),
        target: "≤ 0.5×",
        verdict: verdict(openRatio <= 0.5),
        key: "toolTurns.context",
        figures: { oursMs: open.ours.sample.median, oursMinMs: open.ours.sample.min, piMs: open.pi.sample.median, piMinMs: open.pi.sample.min, ratioToPi: openRatio, targetRatioToPi: 0.5, fileBytes: session.size },
      },
      {
        name: "users' shape: the same context JSON on stdout as pi's",
        ours: `${(open.ours.stdout.length / 1e3).toFixed(0)} kB`,
        peer: `pi ${(open.pi.stdout.length / 1e3).toFixed(0)} kB`,
        ratio: "",
        target: "equal",
        verdict: verdict(open.ours.stdout === open.pi.stdout),
        key: "toolTurns.context.output",
        figures: { oursBytes: open.ours.stdout.length, piBytes: open.pi.stdout.length, equal: open.ours.stdout === open.pi.stdout },
      },
      {
        name: `users' shape, whole process: warm \`sessionkit ls --all --json\` of ${storeWhat} vs pi's SessionManager.list of each project in a process`,
        ours: timing(list.ours.sample),
        peer: `pi ${timing(list.pi.sample)}`,
        ratio: ratio(listRatio),
        target: "≤ 0.15×",
        verdict: verdict(listRatio <= 0.15),
        key: "toolTurns.lsWarm",
        figures: { oursMs: list.ours.sample.median, oursMinMs: list.ours.sample.min, piMs: list.pi.sample.median, piMinMs: list.pi.sample.min, ratioToPi: listRatio, targetRatioToPi: 0.15, sessions: store.files, bytes: store.bytes },
      },
      {
        name: "users' shape: `ls --all --json` lists what pi lists (path, id, cwd, name, message count, created, modified)",
        ours: `${oursListed.size} listed, ${differing} differ`,
        peer: `pi ${piListed.size} listed`,
        ratio: "",
        target: "equal",
        verdict: verdict(sameListing),
        key: "toolTurns.lsWarm.sameInfo",
        figures: { oursListed: oursListed.size, piListed: piListed.size, differing, equal: sameListing },
      },
    ],
    notes: [
      `users' shape: written by pi's SessionManager from the messages of the real sessions in test/fixtures/corpus (tool rounds up to 100 kB; the corpus's median round is 2 kB), re-sequenced: each user prompt followed by 2–40 tool rounds and an answer, a compaction every 500 entries keeping the last 20, one branch. Whole processes, spawn to exit, stdout read in full; ${runs} rounds after one warm-up round (page cache filled, the CLI's catalog written in a scratch $XDG_CACHE_HOME), the order rotated each round; times are median (min). Load average (1/5/15 min) before the context rounds ${loadBefore}, before the listing rounds ${loadBetween}, after ${loadAfter}.`,
    ],
  };
}
