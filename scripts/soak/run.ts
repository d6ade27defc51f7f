/**
 * `npm run soak -- [--kills N] [--browser [--leave-torn-logs]] [--seed S]`: crash soaks. Without
 * --browser, a child process writing a session on node-fs is killed with SIGKILL N times (default
 * 1000); with --browser, the whole Chromium process is killed N times (default 100) while a page
 * appends to IndexedDB and OPFS in a persistent profile, then relaunched and checked; a torn
 * record a kill leaves at the end of one of IndexedDB's LevelDB logs is cut back before the
 * relaunch, unless --leave-torn-logs (./leveldb-log.ts says why). After every kill every
 * entry a flush() acknowledged must be stored. Progress goes to stderr; the last line of stdout is
 *
 *   soak: <kills> kills, <acknowledged> acknowledged entries, <lost> lost
 *
 * and the exit code is 1 when anything was lost or found wrong (listed before that line).
 */
import { parseArgs } from "node:util";
import { soakBrowser } from "./browser.js";
import { soakNodeFs } from "./node-fs.js";

const { values } = parseArgs({
  options: {
    kills: { type: "string" },
    browser: { type: "boolean", default: false },
    "leave-torn-logs": { type: "boolean", default: false },
    seed: { type: "string" },
  },
});
const kills = Number(values.kills ?? (values.browser ? 100 : 1000));
if (!Number.isInteger(kills) || kills < 1) throw new Error(`--kills must be a positive integer, got ${values.kills}`);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);
log(`${values.browser ? "browser (Chromium killed, IndexedDB + OPFS)" : "node-fs (writer child killed)"}: ${kills} kills, seed ${seed}`);

const result = values.browser ? await soakBrowser(kills, seed, log, !values["leave-torn-logs"]) : await soakNodeFs(kills, seed, log);
for (const note of result.notes) process.stdout.write(`note: ${note}\n`);
for (const problem of result.problems) process.stdout.write(`problem: ${problem}\n`);
process.stdout.write(`soak: ${result.kills} kills, ${result.acknowledged} acknowledged entries, ${result.lost} lost\n`);
process.exitCode = result.lost > 0 || result.problems.length > 0 ? 1 : 0;
