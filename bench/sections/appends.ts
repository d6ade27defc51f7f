/**
 * 3. 20k appends of ~1–2 KB messages: pi (appendFileSync per entry, never fsyncs) vs ours with
 * `await flush()` (write + fsync) every 4 entries, and ours with one flush at the end.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { appendMessages, meanEntryBytes, piAppendMessages } from "../lib/appends.js";
import { SCRATCH_DIR } from "../lib/data.js";
import { formatRate, interleave, type Case, type Sample } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

const OURS_ROOT = join(SCRATCH_DIR, "appends-ours");
const PI_DIR = join(SCRATCH_DIR, "appends-pi");

export async function benchAppends(runs: number, count: number): Promise<{ rows: Row[]; notes: string[] }> {
  rmSync(OURS_ROOT, { recursive: true, force: true });
  rmSync(PI_DIR, { recursive: true, force: true });
  const storage = nodeFsStorage({ root: OURS_ROOT });
  type Appended = { ms: number; file: string };
  // What ours wrote is checked once (untimed): pi must read back every entry.
  let piReadBack: number | null = null;
  const ours = (flushEvery: number): Case<Appended> => ({
    name: `ours flush ${flushEvery}`,
    run: () => appendMessages(storage, count, flushEvery),
    async after(done) {
      piReadBack ??= PiSessionManager.open(join(OURS_ROOT, done.file)).getEntries().length;
      await storage.remove(done.file);
    },
  });
  const cases: Case<Appended>[] = [
    ours(4),
    ours(0),
    { name: "pi", run: () => piAppendMessages(PI_DIR, count), after: (done) => rmSync(done.file, { force: true }) },
  ];
  const results = await interleave(cases, runs);
  // Rates from the timed section only (first append until the last flush resolves).
  const rate = (name: string) => {
    const sample: Sample = results.get(name)!.sample;
    return { median: count / (sample.median / 1000), best: count / (sample.min / 1000) };
  };
  const pi = rate("pi");
  const flush4 = rate("ours flush 4");
  const atEnd = rate("ours flush 0");
  const show = (r: { median: number; best: number }) => `${formatRate(r.median)} (best ${formatRate(r.best)})`;
  const rows: Row[] = [
    {
      name: `${count.toLocaleString("en-US")} appends, \`await flush()\` (write + fsync) every 4: ours vs the 2,000/s target`,
      ours: show(flush4),
      peer: `pi ${show(pi)} (no fsync)`,
      ratio: ratio(flush4.median / pi.median),
      target: "≥ 2,000/s",
      verdict: verdict(flush4.median >= 2000),
      key: "appends.flushEvery4",
      figures: { count, oursPerSec: flush4.median, oursBestPerSec: flush4.best, piPerSec: pi.median, piBestPerSec: pi.best, ratioToPi: flush4.median / pi.median, targetPerSec: 2000 },
    },
    {
      name: `${count.toLocaleString("en-US")} appends, one \`flush()\` at the end: ours vs pi`,
      ours: show(atEnd),
      peer: `pi ${show(pi)} (ours includes one fsync, pi none)`,
      ratio: ratio(atEnd.median / pi.median),
      target: "≥ 1× pi",
      verdict: verdict(atEnd.median >= pi.median),
      key: "appends.flushAtEnd",
      figures: { count, oursPerSec: atEnd.median, oursBestPerSec: atEnd.best, piPerSec: pi.median, piBestPerSec: pi.best, ratioToPi: atEnd.median / pi.median, targetRatioToPi: 1 },
    },
  ];
  rows.push({
    name: "pi reads back every entry ours appended",
    ours: `${count} appended`,
    peer: `pi reads ${piReadBack}`,
    ratio: "",
    target: "equal",
    verdict: verdict(piReadBack === count),
    key: "appends.piReadBack",
    figures: { appended: count, piRead: piReadBack ?? 0, equal: piReadBack === count },
  });
  await storage.close();
  rmSync(OURS_ROOT, { recursive: true, force: true });
  rmSync(PI_DIR, { recursive: true, force: true });
  return {
    rows,
    notes: [
      `appends: the same ${count} messages (user, assistant with thinking + text + toolCall + usage, tool results; mean entry ${Math.round(meanEntryBytes(count))} bytes) into a new session; ${runs} interleaved rounds after a warm-up; rates are entries / median time (best = from the fastest run). Ours writes through nodeFsStorage (one cached append handle, fsync on flush).`,
    ],
  };
}
