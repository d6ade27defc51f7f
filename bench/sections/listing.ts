/**
 * 4. Listing 300 sessions (~1 GB) in one project dir: pi's SessionManager.list(cwd, dir) vs ours
 * cold (no catalog) and warm (catalog present, a second call).
 */
import { linkSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { SessionManager } from "../../src/index.js";
import { LIST_CWD, LIST_ROOT, LIST_SESSION_DIR, ensureListSessions } from "../lib/data.js";
import { formatMs, interleave, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

interface Listed {
  id: string;
  cwd: string;
  name?: string | undefined;
  created: Date;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  allMessagesText?: string | undefined;
}

const comparable = (info: Listed) => ({
  cwd: info.cwd,
  name: info.name,
  created: info.created.getTime(),
  modified: info.modified.getTime(),
  messageCount: info.messageCount,
  firstMessage: info.firstMessage,
});

/** A small dir of hard links to one copy of each base, for the warm-up round: no extra disk. */
function linkWarmupDir(): string {
  const dir = "sessions/--bench-list-warmup--";
  const from = join(LIST_ROOT, LIST_SESSION_DIR);
  const to = join(LIST_ROOT, dir);
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const names = readdirSync(from).filter((name) => name.endsWith(".jsonl")).sort().slice(0, 10);
  for (const name of names) linkSync(join(from, name), join(to, name));
  return dir;
}

export async function benchListing(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureListSessions();
  const catalogDir = join(LIST_ROOT, CATALOG_DIR);
  const storage = nodeFsStorage({ root: LIST_ROOT });
  const warmupDir = linkWarmupDir();
  const ours = (dir = LIST_SESSION_DIR) => SessionManager.list(storage, LIST_CWD, { sessionDir: dir });
  const pi = (dir = LIST_SESSION_DIR) => PiSessionManager.list(LIST_CWD, join(LIST_ROOT, dir));
  const dropCatalog = () => rmSync(catalogDir, { recursive: true, force: true });
  const cases: Case<Listed[]>[] = [
    { name: "pi", run: () => pi(), warmup: () => pi(warmupDir) },
    { name: "ours cold", before: dropCatalog, run: () => ours(), warmup: () => (dropCatalog(), ours(warmupDir)) },
    {
      name: "ours warm",
      // The timed call is the second one: the first (untimed) brings the catalog up to date.
      before: async () => void (await ours()),
      run: () => ours(),
      warmup: async () => (await ours(warmupDir), ours(warmupDir)),
    },
  ];
  const results = await interleave(cases, runs);
  const sample = (name: string): Sample => results.get(name)!.sample;
  const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;
  const piTime = sample("pi");
  const warm = sample("ours warm");
  const cold = sample("ours cold");
  const what = `${data.files} sessions, ${(data.bytes / 1e9).toFixed(2)} GB`;
  const rows: Row[] = [
    {
      name: `list ${what}: ours warm (catalog present) vs pi's list()`,
      ours: timing(warm),
      peer: `pi ${timing(piTime)}`,
      ratio: ratio(warm.median / piTime.median),
      target: "≤ 0.1×",
      verdict: verdict(warm.median / piTime.median <= 0.1),
      key: "list.warm",
      figures: { sessions: data.files, bytes: data.bytes, oursMs: warm.median, oursMinMs: warm.min, piMs: piTime.median, piMinMs: piTime.min, ratioToPi: warm.median / piTime.median, targetRatioToPi: 0.1 },
    },
    {
      name: `list ${what}: ours cold (catalog deleted first) vs pi's list()`,
      ours: timing(cold),
      peer: `pi ${timing(piTime)}`,
      ratio: ratio(cold.median / piTime.median),
      target: "—",
      verdict: "info",
      key: "list.cold",
      figures: { oursMs: cold.median, oursMinMs: cold.min, ratioToPi: cold.median / piTime.median },
    },
  ];
  const piInfos = new Map(results.get("pi")!.last.map((info) => [info.id, comparable(info)]));
  const mismatches = results
    .get("ours warm")!
    .last.filter((info) => JSON.stringify(comparable(info)) !== JSON.stringify(piInfos.get(info.id)));
  const oursCount = results.get("ours warm")!.last.length;
  rows.push({
    name: "same SessionInfo as pi for every session (id, cwd, name, created, modified, counts, first message; allMessagesText is read only on request)",
    ours: `${oursCount} listed, ${mismatches.length} differ`,
    peer: `pi ${piInfos.size} listed`,
    ratio: "",
    target: "equal",
    verdict: verdict(oursCount === piInfos.size && mismatches.length === 0),
    key: "list.sameInfo",
    figures: { oursListed: oursCount, piListed: piInfos.size, differing: mismatches.length, equal: oursCount === piInfos.size && mismatches.length === 0 },
  });
  await storage.close();
  return {
    rows,
    notes: [
      `listing: one project dir of ${data.files} pi-written sessions (copies of 10 pi-written bases of 1–6.5 MB, each with a fresh header); ${runs} interleaved rounds after a warm-up; the warm-up round lists a dir of 10 of those files (hard links); the OS page cache is warm for all three. Cold = the catalog dir deleted before the call (untimed); warm = the catalog already written by a previous call.`,
    ],
  };
}
