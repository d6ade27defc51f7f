/**
 * The CLI as a user runs it, whole processes (issue 26, items 1 and 2), against `node -e 0` in
 * the same rounds: `sessionkit --help`; `ls --all --json` with the catalog warm (pi's listAll()
 * in a process beside it); `search WORD --all --json` with the index warm, for a rare, a middling
 * and a common word (`grep -rlF WORD` beside it; words counted in the first 3 sessions of each
 * project). On the search store: 300 pi-written sessions in
 * 10 projects. `npm run bench -- --only startup` runs this section alone.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { bundleCli } from "../../test/shared/cli-runner.js";
import { BENCH_DIR, ensureSearchStore, SCRATCH_DIR, SEARCH_ROOT } from "../lib/data.js";
import { formatMs, interleave, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Figures, type Row } from "../lib/report.js";

const PI_SESSION_MANAGER = join(BENCH_DIR, "..", "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");

/** Targets of issue 26: `--help` within 1.2× `node -e 0`; a warm `ls` within 60 ms of it, a warm search within 120 ms. */
const HELP_RATIO_TARGET = 1.2;
const LS_OVER_NODE_TARGET_MS = 60;
const SEARCH_OVER_NODE_TARGET_MS = 120;

/** Linux's clock ticks per second (USER_HZ), the unit of /proc's CPU times. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) of this process's finished children so far, in ms (/proc/self/stat's
 * cutime and cstime: every thread of theirs, in 10 ms ticks; summed over many runs, finer); null
 * where there is no /proc.
 */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU ms each case's processes took, summed, and how many ran (the warm-up round included). */
const cpuSpent = new Map<string, { ms: number; runs: number }>();

/** Runs a process to its end, its stdout thrown away, adding its CPU to `label`'s; fails on a failure (grep's 1 is "no match"). */
function runProcess(label: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv): void {
  const before = childrenCpuMs();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], env, maxBuffer: 1 << 30 });
  const after = childrenCpuMs();
  if (result.status !== 0 && !(command === "grep" && result.status === 1)) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr?.toString().slice(-500)}`);
  if (before === null || after === null) return;
  const spent = cpuSpent.get(label) ?? { ms: 0, runs: 0 };
  cpuSpent.set(label, { ms: spent.ms + after - before, runs: spent.runs + 1 });
}

/** The mean CPU ms of `label`'s processes; NaN where it could not be read. */
function meanCpuMs(label: string): number {
  const spent = cpuSpent.get(label);
  return spent ? spent.ms / spent.runs : NaN;
}

/** Sessions of each project whose words are counted. */
const SAMPLED_PER_PROJECT = 3;

/**
 * Words of user and assistant text of the first sessions of each project: the one found in the
 * fewest of those sessions, the one nearest to half of them, and the one in the most (ties: the
 * first alphabetically).
 */
function pickWords(): { word: string; sessions: number; of: number }[] {
  const sessionsOf = new Map<string, number>();
  let sampled = 0;
  for (const project of readdirSync(join(SEARCH_ROOT, "sessions")).sort()) {
    for (const name of readdirSync(join(SEARCH_ROOT, "sessions", project)).filter((file) => file.endsWith(".jsonl")).sort().slice(0, SAMPLED_PER_PROJECT)) {
      sampled++;
      const seen = new Set<string>();
      for (const line of readFileSync(join(SEARCH_ROOT, "sessions", project, name), "utf8").split("\n")) {
        if (!line.includes('"type":"message"')) continue;
        const { role, content } = (JSON.parse(line) as { message: { role: string; content: unknown } }).message;
        if (role !== "user" && role !== "assistant") continue;
        const text = typeof content === "string" ? content : (content as { type: string; text?: string }[]).map((block) => (block.type === "text" ? block.text : "")).join(" ");
        for (const word of text.toLowerCase().match(/\b[a-z]{5,}\b/g) ?? []) seen.add(word);
      }
      for (const word of seen) sessionsOf.set(word, (sessionsOf.get(word) ?? 0) + 1);
    }
  }
  const byCount = [...sessionsOf].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const nearHalf = [...byCount].sort((a, b) => Math.abs(a[1] - sampled / 2) - Math.abs(b[1] - sampled / 2) || (a[0] < b[0] ? -1 : 1))[0]!;
  return [byCount[0]!, nearHalf, byCount[byCount.length - 1]!].map(([word, sessions]) => ({ word, sessions, of: sampled }));
}

export async function benchStartup(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureSearchStore();
  const what = `${data.files} sessions in 10 projects, ${(data.bytes / 1e6).toFixed(0)} MB`;
  const cliDir = join(SCRATCH_DIR, "startup-cli");
  mkdirSync(cliDir, { recursive: true });
  const cli = await bundleCli(cliDir);
  // The CLI keeps the store's catalog and index in its cache: a scratch one, the search section's.
  const cliEnv = { ...process.env, XDG_CACHE_HOME: join(SCRATCH_DIR, "search-cli-cache") };
  const piEnv = { ...process.env, PI_CODING_AGENT_DIR: SEARCH_ROOT };
  const sessionkit = (label: string, ...args: string[]) => runProcess(label, process.execPath, [cli, ...args], cliEnv);
  const piScript = `const { SessionManager } = await import(${JSON.stringify(PI_SESSION_MANAGER)}); process.stdout.write(JSON.stringify(await SessionManager.listAll()));`;
  const words = pickWords();
  // Warm: the catalog and the index up to date (untimed; the first search of a new cache indexes the store).
  sessionkit("warm", "--root", SEARCH_ROOT, "ls", "--all", "--json");
  for (const { word } of words) sessionkit("warm", "--root", SEARCH_ROOT, "search", word, "--all", "--json");

  const results = await interleave<void>(
    [
      { name: "node", run: () => runProcess("node", process.execPath, ["-e", "0"], process.env) },
      { name: "help", run: () => sessionkit("help", "--help") },
      { name: "ls", run: () => sessionkit("ls", "--root", SEARCH_ROOT, "ls", "--all", "--json") },
      { name: "pi", run: () => runProcess("pi", process.execPath, ["--input-type=module", "-e", piScript], piEnv) },
      ...words.flatMap(({ word }) => [
        { name: `search ${word}`, run: () => sessionkit(`search ${word}`, "--root", SEARCH_ROOT, "search", word, "--all", "--json") },
        { name: `grep ${word}`, run: () => runProcess(`grep ${word}`, "grep", ["-rlF", word, join(SEARCH_ROOT, "sessions")], process.env) },
      ]),
    ],
    runs,
  );
  const sample = (name: string): Sample => results.get(name)!.sample;
  /** Wall time, and the mean CPU time of the process (all its threads): on a shared machine the steadier figure. */
  const timing = (s: Sample, label?: string) => `${formatMs(s.median)} (min ${formatMs(s.min)})${label === undefined || Number.isNaN(meanCpuMs(label)) ? "" : `, CPU ${formatMs(meanCpuMs(label))}`}`;
  /** The CPU figures of a case (absent where /proc is not there). */
  const cpuFigures = (label: string): Figures => (Number.isNaN(meanCpuMs(label)) ? {} : { oursCpuMs: meanCpuMs(label), nodeCpuMs: meanCpuMs("node") });
  const node = sample("node");
  const help = sample("help");
  const ls = sample("ls");
  const pi = sample("pi");
  const rows: Row[] = [
    {
      name: "`sessionkit --help`, whole process, vs `node -e 0`",
      ours: timing(help, "help"),
      peer: `node -e 0 ${timing(node, "node")}`,
      ratio: ratio(help.median / node.median),
      target: `≤ ${HELP_RATIO_TARGET}×`,
      verdict: verdict(help.median / node.median <= HELP_RATIO_TARGET),
      key: "startup.help",
      figures: { oursMs: help.median, oursMinMs: help.min, nodeMs: node.median, nodeMinMs: node.min, ratioToNode: help.median / node.median, targetRatioToNode: HELP_RATIO_TARGET, ...cpuFigures("help") },
    },
    {
      name: `\`ls --all --json\` of ${what}, warm catalog, whole process, vs \`node -e 0\` (and a process running pi's listAll())`,
      ours: timing(ls, "ls"),
      peer: `node -e 0 ${timing(node, "node")}; pi ${timing(pi)}`,
      ratio: `node + ${formatMs(ls.median - node.median)}`,
      target: `≤ node + ${LS_OVER_NODE_TARGET_MS} ms`,
      verdict: verdict(ls.median - node.median <= LS_OVER_NODE_TARGET_MS),
      key: "startup.ls",
      figures: { oursMs: ls.median, oursMinMs: ls.min, nodeMs: node.median, overNodeMs: ls.median - node.median, targetOverNodeMs: LS_OVER_NODE_TARGET_MS, piMs: pi.median, ratioToPi: ls.median / pi.median, ...cpuFigures("ls") },
    },
  ];
  const kinds = ["rare", "middling", "common"] as const;
  words.forEach(({ word, sessions, of }, i) => {
    const search = sample(`search ${word}`);
    const grep = sample(`grep ${word}`);
    rows.push({
      name: `\`search ${word} --all --json\` (a ${kinds[i]} word: in ${sessions} of ${of} sessions sampled), warm index, whole process, vs \`node -e 0\` (and \`grep -rlF ${word}\`)`,
      ours: timing(search, `search ${word}`),
      peer: `node -e 0 ${timing(node, "node")}; grep ${timing(grep)}`,
      ratio: `node + ${formatMs(search.median - node.median)}`,
      target: `≤ node + ${SEARCH_OVER_NODE_TARGET_MS} ms`,
      verdict: verdict(search.median - node.median <= SEARCH_OVER_NODE_TARGET_MS),
      key: `startup.search.${kinds[i]}`,
      figures: { oursMs: search.median, oursMinMs: search.min, nodeMs: node.median, overNodeMs: search.median - node.median, targetOverNodeMs: SEARCH_OVER_NODE_TARGET_MS, grepMs: grep.median, ratioToGrep: search.median / grep.median, ...cpuFigures(`search ${word}`) },
    });
  });
  return {
    rows,
    notes: [
      `start-up: whole processes, stdout thrown away, ${runs} interleaved rounds after a warm-up round (medians of wall time; CPU: the mean user + system time of the process, all its threads, from /proc's children times, over the rounds and the warm-up): \`node -e 0\`, the bundled CLI (\`node sessionkit.mjs\`, its chunks beside it; catalog and index in a scratch $XDG_CACHE_HOME, brought up to date before the rounds), a process running pi's listAll() (PI_CODING_AGENT_DIR at the store), \`grep -rlF\` over the store's sessions/. Words: ${words.map(({ word }) => word).join(", ")}.`,
    ],
  };
}
