/**
 * (--profile) CPU profiles of ours, each in a fresh process, sampled (100 µs) through the
 * inspector around the measured part only: no startup, no data generation.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { ChildTask } from "../lib/child-task.js";
import { topSelfTimes } from "../lib/cpuprofile.js";
import { BENCH_DIR, DATA_DIR, LIST_CWD, LIST_ROOT, LIST_SESSION_DIR, OPEN_ROOT, SCRATCH_DIR, ensureListSessions, ensureOpenSession } from "../lib/data.js";
import { runChild } from "../lib/measure.js";

const PROFILE_DIR = join(DATA_DIR, "profiles");

export async function profileOurs(appendCount: number): Promise<string[]> {
  const open = ensureOpenSession();
  const openPath = relative(OPEN_ROOT, open.path).split(sep).join("/");
  ensureListSessions();
  const appendRoot = join(SCRATCH_DIR, "profile-appends");
  const tasks: Array<{ title: string; task: ChildTask }> = [
    { title: "open + context, read-only, 3 times", task: { kind: "open-ours", root: OPEN_ROOT, path: openPath, readOnly: true, repeat: 3 } },
    { title: "open + context, writable, 3 times", task: { kind: "open-ours", root: OPEN_ROOT, path: openPath, readOnly: false, repeat: 3 } },
    { title: "list cold (no catalog)", task: { kind: "list-cold-ours", root: LIST_ROOT, cwd: LIST_CWD, sessionDir: LIST_SESSION_DIR } },
    { title: `${appendCount} appends, flush every 4`, task: { kind: "appends-ours", root: appendRoot, count: appendCount, flushEvery: 4 } },
    { title: `${appendCount} appends, one flush at the end`, task: { kind: "appends-ours", root: appendRoot, count: appendCount, flushEvery: 0 } },
  ];
  const lines: string[] = [];
  rmSync(PROFILE_DIR, { recursive: true, force: true });
  mkdirSync(PROFILE_DIR, { recursive: true });
  for (const [i, { title, task }] of tasks.entries()) {
    const profileTo = join(PROFILE_DIR, `${i}.cpuprofile`);
    await runChild({ ...task, profileTo }, ["--expose-gc"]);
    const { busyMs, top } = topSelfTimes(profileTo, join(BENCH_DIR, ".."), 12);
    lines.push(`### ${title}: ${(busyMs / 1000).toFixed(2)} s sampled`, "", "| self time | share | function |", "|--:|--:|---|");
    for (const t of top) lines.push(`| ${t.ms.toFixed(0)} ms | ${(t.share * 100).toFixed(1)}% | \`${t.where}\` |`);
    lines.push("");
  }
  rmSync(PROFILE_DIR, { recursive: true, force: true });
  return lines;
}
