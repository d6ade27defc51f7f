/**
 * 5. Finding sessions, on the search store (300 pi-written sessions, 10 projects, ~436 MB):
 * listing every project warm and cold against pi's listAll() (whole processes, and in-process),
 * catalog bytes per session; the search index built cold, its bytes against the text's; warm
 * single-word searches against `grep -rl` over the same files; the same searches after 100
 * appends to 10 sessions, counting the bytes read. Then a store of Japanese, Korean and Chinese
 * text (40 pi-written sessions, drawn from the words of TypeScript's translated messages): the
 * index built cold and its bytes, and substrings of its text searched (the sessions `grep -rlF`
 * finds, and the time per query against a word's on the first store).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { CATALOG_DIR } from "../../src/session/listing.js";
import { SEARCH_DIR } from "../../src/search/search-index.js";
import { SessionManager, searchSessions, type SearchIndexProgress, type StoragePort } from "../../src/index.js";
import { storeCacheDir } from "../../cli/store-cache.js";
import { bundleCli } from "../../test/shared/cli-runner.js";
import { CJK_LANGUAGES, cjkTextSource } from "../lib/cjk-text.js";
import { BENCH_DIR, ensureSearchStore, SCRATCH_DIR, SEARCH_ROOT } from "../lib/data.js";
import { formatMs, interleave, summarize, type Sample } from "../lib/measure.js";
import { seededRandom } from "../../test/shared/message-factory.js";
import { PiSessionManager } from "../../test/shared/pi-session-manager.js";
import { ratio, verdict, type Row } from "../lib/report.js";

const PI_SESSION_MANAGER = join(BENCH_DIR, "..", "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");
const WORDS = 12;
/** Issue 26: a warm `sessionkit search` process within 120 ms of `node -e 0`. */
const SEARCH_PROCESS_OVER_NODE_MS = 120;

/** Wall time of a whole process, its stdout thrown away. */
function processMs(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const start = performance.now();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], env, maxBuffer: 1 << 30 });
  const elapsed = performance.now() - start;
  if (result.status !== 0 && !(command === "grep" && result.status === 1)) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr?.toString().slice(-500)}`);
  return elapsed;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path);
    total += info.isDirectory() ? dirBytes(path) : info.size;
  }
  return total;
}

const timing = (s: Sample) => `${formatMs(s.median)} (min ${formatMs(s.min)})`;

/** Texts of user and assistant messages, and words spread over how many sessions hold them. */
function scanStore(root: string): { textBytes: number; words: string[] } {
  const encoder = new TextEncoder();
  let textBytes = 0;
  const sessionsOf = new Map<string, number>();
  const sessions = join(root, "sessions");
  for (const dir of readdirSync(sessions)) {
    for (const name of readdirSync(join(sessions, dir))) {
      const seen = new Set<string>();
      for (const line of readFileSync(join(sessions, dir, name), "utf8").split("\n")) {
        if (!line.includes('"type":"message"')) continue;
        const record = JSON.parse(line) as { message: { role: string; content: unknown } };
        const { role, content } = record.message;
        if (role !== "user" && role !== "assistant") continue;
        const text = typeof content === "string" ? content : (content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text).join("\n");
        textBytes += encoder.encode(text).length;
        for (const word of text.toLowerCase().match(/[a-z]{5,}/g) ?? []) seen.add(word);
      }
      for (const word of seen) sessionsOf.set(word, (sessionsOf.get(word) ?? 0) + 1);
    }
  }
  const sorted = [...sessionsOf.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const words = Array.from({ length: WORDS }, (_, i) => sorted[Math.floor(((i + 0.5) * sorted.length) / WORDS)]![0]);
  return { textBytes, words };
}

const CJK_SESSIONS_PER_LANGUAGE = 10;
const CJK_SESSION_CHARS = 150_000;
const CJK_QUERIES = 24;
/** Letters and digits of those scripts (not their punctuation: 、 and 。 separate words). */
const UNSPACED_RUN = /(?:(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])+/gu;
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * Sessions of Japanese, Korean and Chinese text, written by pi: per language 10 sessions of
 * ~150,000 characters, each user message 10 to 60 segments of the language (words, punctuation,
 * spaces: bench/lib/cjk-text.ts), each answer 40 to 400; and queries: substrings of 1 to 4
 * characters of the runs of such characters.
 */
function writeCjkStore(root: string): { files: number; bytes: number; textBytes: number; queries: string[] } {
  rmSync(root, { recursive: true, force: true });
  const random = seededRandom(0xc1c);
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const encoder = new TextEncoder();
  let textBytes = 0;
  const runs: string[] = [];
  for (const language of CJK_LANGUAGES) {
    const text = cjkTextSource(language);
    for (let i = 0; i < CJK_SESSIONS_PER_LANGUAGE; i++) {
      const pi = PiSessionManager.create(`/bench/cjk-${language}`, join(root, "sessions", `--bench-cjk-${language}--`));
      for (let chars = 0; chars < CJK_SESSION_CHARS; ) {
        const question = text(random, between(10, 60));
        const answer = text(random, between(40, 400));
        pi.appendMessage({ role: "user", content: question, timestamp: Date.now() } as never);
        pi.appendMessage({ role: "assistant", content: [{ type: "text", text: answer }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "stop", timestamp: Date.now() } as never);
        chars += question.length + answer.length;
        textBytes += encoder.encode(question).length + encoder.encode(answer).length;
        if (random() < 0.05) runs.push(...(answer.match(UNSPACED_RUN) ?? []));
      }
    }
  }
  const queries = Array.from({ length: CJK_QUERIES }, (_, i) => {
    const length = 1 + (i % 4);
    const candidates = runs.filter((run) => Array.from(run).length >= length);
    const chars = Array.from(candidates[Math.floor(random() * candidates.length)]!);
    const at = Math.floor(random() * (chars.length - length + 1));
    return chars.slice(at, at + length).join("");
  });
  const files = readdirSync(join(root, "sessions")).flatMap((dir) => readdirSync(join(root, "sessions", dir)).map((name) => join(root, "sessions", dir, name)));
  return { files: files.length, bytes: files.reduce((n, file) => n + statSync(file).size, 0), textBytes, queries };
}

/** Session files (absolute paths) that `grep -rlF` finds. */
function grepFiles(root: string, text: string): Set<string> {
  const result = spawnSync("grep", ["-rlF", text, join(root, "sessions")], { encoding: "utf8", env: { ...process.env, LC_ALL: "C.UTF-8" }, maxBuffer: 1 << 26 });
  if (result.status !== 0 && result.status !== 1) throw new Error(`grep failed: ${result.stderr}`);
  return new Set(result.stdout.split("\n").filter((line) => line.endsWith(".jsonl")));
}

/** Counts the bytes read from session files. */
function countingStorage(inner: StoragePort): StoragePort & { sessionBytes: number } {
  const port = Object.create(inner) as StoragePort & { sessionBytes: number };
  port.sessionBytes = 0;
  port.read = async (path, range) => {
    const bytes = await inner.read(path, range);
    if (bytes && path.startsWith("sessions/")) port.sessionBytes += bytes.length;
    return bytes;
  };
  return port;
}

/** A copy of the store to append to: hard links to the untouched files, real copies of `changed`. */
function scratchStore(changed: Set<string>): string {
  const root = join(SCRATCH_DIR, "search-appended");
  rmSync(root, { recursive: true, force: true });
  const copyTree = (from: string, to: string, link: boolean) => {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) {
      const source = join(from, name);
      if (statSync(source).isDirectory()) copyTree(source, join(to, name), link);
      else if (link && !changed.has(source)) linkSync(source, join(to, name));
      else copyFileSync(source, join(to, name));
    }
  };
  copyTree(join(SEARCH_ROOT, "sessions"), join(root, "sessions"), true);
  copyTree(join(SEARCH_ROOT, ".sessionkit"), join(root, ".sessionkit"), false);
  return root;
}

export async function benchSearch(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const data = ensureSearchStore();
  const rows: Row[] = [];
  const what = `${data.files} sessions in 10 projects, ${(data.bytes / 1e6).toFixed(0)} MB`;
  const cliDir = join(SCRATCH_DIR, "search-cli");
  mkdirSync(cliDir, { recursive: true });
  const cli = await bundleCli(cliDir);
  const piEnv = { ...process.env, PI_CODING_AGENT_DIR: SEARCH_ROOT };
  // The CLI keeps a store's catalog and index in its cache ($XDG_CACHE_HOME/sessionkit/stores/…): a scratch one here.
  const cliEnv = { ...process.env, XDG_CACHE_HOME: join(SCRATCH_DIR, "search-cli-cache") };
  const cliCache = (root: string) => storeCacheDir(root, cliEnv, os.homedir());
  const sessionkit = (root: string, ...args: string[]) => processMs(process.execPath, [cli, "--root", root, ...args], cliEnv);
  const piScript = `const { SessionManager } = await import(${JSON.stringify(PI_SESSION_MANAGER)}); process.stdout.write(JSON.stringify(await SessionManager.listAll()));`;
  const catalogDir = join(SEARCH_ROOT, CATALOG_DIR);
  const dropCliCatalog = () => rmSync(join(cliCache(SEARCH_ROOT), "catalog"), { recursive: true, force: true });

  // ---- listing, whole processes: `sessionkit ls --all --json` against a process running pi's listAll()
  const listed = await interleave<number>(
    [
      { name: "pi", run: () => processMs(process.execPath, ["--input-type=module", "-e", piScript], piEnv) },
      { name: "ours warm", before: () => void sessionkit(SEARCH_ROOT, "ls", "--all", "--json"), run: () => sessionkit(SEARCH_ROOT, "ls", "--all", "--json") },
      { name: "ours cold", before: dropCliCatalog, run: () => sessionkit(SEARCH_ROOT, "ls", "--all", "--json") },
    ],
    runs,
  );
  const piProcess = listed.get("pi")!.sample;
  const warmProcess = listed.get("ours warm")!.sample;
  const coldProcess = listed.get("ours cold")!.sample;
  rows.push(
    {
      name: `\`ls --all --json\` of ${what}, warm catalog, whole process, vs a process running pi's listAll()`,
      ours: timing(warmProcess),
      peer: `pi ${timing(piProcess)}`,
      ratio: ratio(warmProcess.median / piProcess.median),
      target: "≤ 0.05×",
      verdict: verdict(warmProcess.median / piProcess.median <= 0.05),
      key: "search.lsWarmProcess",
      figures: { oursMs: warmProcess.median, piMs: piProcess.median, ratio: warmProcess.median / piProcess.median },
    },
    {
      name: "`ls --all --json`, catalog deleted first (cold), whole process, vs pi's listAll()",
      ours: timing(coldProcess),
      peer: `pi ${timing(piProcess)}`,
      ratio: ratio(coldProcess.median / piProcess.median),
      target: "≤ 1×",
      verdict: verdict(coldProcess.median / piProcess.median <= 1),
      key: "search.lsColdProcess",
      figures: { oursMs: coldProcess.median, piMs: piProcess.median, ratio: coldProcess.median / piProcess.median },
    },
  );

  // ---- listing in-process: SessionManager.listAll against pi's, and the same SessionInfo
  const storage = nodeFsStorage({ root: SEARCH_ROOT });
  process.env.PI_CODING_AGENT_DIR = SEARCH_ROOT;
  const inProcess = await interleave<unknown>(
    [
      { name: "pi", run: () => PiSessionManager.listAll() },
      { name: "ours warm", before: async () => void (await SessionManager.listAll(storage)), run: () => SessionManager.listAll(storage) },
    ],
    runs,
  );
  const piIn = inProcess.get("pi")!.sample;
  const oursIn = inProcess.get("ours warm")!.sample;
  rows.push({
    name: "listAll, warm catalog, in-process (the API a picker calls) vs pi's listAll()",
    ours: timing(oursIn),
    peer: `pi ${timing(piIn)}`,
    ratio: ratio(oursIn.median / piIn.median),
    target: "≤ 0.05×",
    verdict: verdict(oursIn.median / piIn.median <= 0.05),
    key: "search.listAllInProcess",
    figures: { oursMs: oursIn.median, piMs: piIn.median, ratio: oursIn.median / piIn.median },
  });
  const piInfos = (await PiSessionManager.listAll()) as unknown as { path: string; allMessagesText: string }[];
  const byPath = new Map(piInfos.map((info) => [info.path, info]));
  const comparable = (info: object, withText: boolean) => {
    const { path: _path, allMessagesText, ...rest } = info as { path: string; allMessagesText?: string };
    return JSON.stringify({ ...rest, ...(withText ? { allMessagesText } : {}) });
  };
  const differing = (infos: { path: string }[], withText: boolean) =>
    infos.filter((info) => comparable(info, withText) !== comparable(byPath.get(join(SEARCH_ROOT, info.path)) ?? {}, withText)).length;
  const ours = await SessionManager.listAll(storage);
  const oursWithText = await SessionManager.listAll(storage, { withText: true });
  rows.push({
    name: "same SessionInfo as pi for every session: without allMessagesText (default) / with it (withText)",
    ours: `${ours.length} listed: ${differing(ours, false)} differ / ${differing(oursWithText, true)} differ`,
    peer: `pi ${piInfos.length} listed`,
    ratio: "",
    target: "equal",
    verdict: verdict(ours.length === piInfos.length && differing(ours, false) === 0 && differing(oursWithText, true) === 0),
    key: "search.sameInfo",
    figures: { listed: ours.length, piListed: piInfos.length, differ: differing(ours, false), differWithText: differing(oursWithText, true) },
  });
  const catalogBytes = dirBytes(catalogDir);
  rows.push({
    name: "catalog bytes per session (.sessionkit/catalog)",
    ours: `${(catalogBytes / data.files / 1024).toFixed(2)} KiB (${(catalogBytes / 1e6).toFixed(2)} MB in all)`,
    peer: `sessions ${(data.bytes / data.files / 1e6).toFixed(2)} MB each`,
    ratio: ratio(catalogBytes / data.bytes),
    target: "—",
    verdict: "info",
    key: "search.catalog",
    figures: { bytesPerSession: catalogBytes / data.files, totalBytes: catalogBytes, sessionBytes: data.bytes },
  });

  // ---- the search index, cold
  rmSync(join(SEARCH_ROOT, SEARCH_DIR), { recursive: true, force: true });
  const { textBytes, words } = scanStore(SEARCH_ROOT);
  let cold: SearchIndexProgress | undefined;
  const coldStart = performance.now();
  await searchSessions(storage, words[0]!, { onProgress: (p) => (cold = p) });
  const coldMs = performance.now() - coldStart;
  rows.push({
    name: `cold index build (first search, user + assistant text), ${what}`,
    ours: `${formatMs(coldMs)}: ${cold!.filesDone} files, ${(cold!.bytesDone / 1e6).toFixed(0)} MB read`,
    peer: `${((cold!.bytesDone / 1e6) / (coldMs / 1000)).toFixed(0)} MB/s`,
    ratio: "",
    target: "—",
    verdict: "info",
    key: "search.coldIndex",
    figures: { ms: coldMs, files: cold!.filesDone, bytesRead: cold!.bytesDone },
  });
  const indexBytes = statSync(join(SEARCH_ROOT, SEARCH_DIR, "text.sqlite")).size;
  rows.push({
    name: "index bytes vs the user + assistant text it indexes",
    ours: `${(indexBytes / 1e6).toFixed(1)} MB`,
    peer: `text ${(textBytes / 1e6).toFixed(1)} MB (sessions ${(data.bytes / 1e6).toFixed(0)} MB)`,
    ratio: `${((100 * indexBytes) / textBytes).toFixed(1)} %`,
    target: "≤ 25 %",
    verdict: verdict(indexBytes <= 0.25 * textBytes),
    key: "search.indexSize",
    figures: { indexBytes, textBytes, ratio: indexBytes / textBytes },
  });

  // ---- warm single-word searches against grep -rl
  const keyOf = (label: string) => (label === "warm" ? "warm" : "afterAppends");
  const searchRows = async (root: string, label: string, port: StoragePort): Promise<Row[]> => {
    sessionkit(root, "search", words[0]!, "--all", "--json"); // the CLI's own index up to date, untimed
    const totals = { api: [] as number[], cli: [] as number[], grep: [] as number[], node: [] as number[] };
    for (let round = 0; round < runs; round++) {
      let api = 0;
      let cliMs = 0;
      let grep = 0;
      let node = 0;
      for (const word of words) {
        const start = performance.now();
        await searchSessions(port, word, { limit: 20 });
        api += performance.now() - start;
        cliMs += sessionkit(root, "search", word, "--all", "--limit", "20", "--json");
        grep += processMs("grep", ["-rlF", word, join(root, "sessions")]);
        node += processMs(process.execPath, ["-e", "0"]);
      }
      totals.api.push(api);
      totals.cli.push(cliMs);
      totals.grep.push(grep);
      totals.node.push(node);
    }
    const [api, cliSample, grep, node] = [summarize(totals.api), summarize(totals.cli), summarize(totals.grep), summarize(totals.node)];
    const overNodePerSearch = (cliSample.median - node.median) / words.length;
    return [
      {
        name: `${label}: searchSessions (in-process, limit 20) of ${words.length} single words, total, vs \`grep -rlF\` of each`,
        ours: timing(api),
        peer: `grep ${timing(grep)}`,
        ratio: ratio(api.median / grep.median),
        target: "≤ 0.1×",
        verdict: verdict(api.median / grep.median <= 0.1),
        key: `search.${keyOf(label)}.inProcess`,
        figures: { oursMs: api.median, grepMs: grep.median, ratio: api.median / grep.median },
      },
      {
        name: `${label}: \`sessionkit search WORD --all --json\` (whole process) of the same words, total, vs as many \`node -e 0\` (and \`grep -rlF\`), same rounds`,
        ours: timing(cliSample),
        peer: `node -e 0 ${timing(node)}; grep ${timing(grep)}`,
        ratio: `node + ${formatMs(overNodePerSearch)} a search`,
        target: `≤ node + ${SEARCH_PROCESS_OVER_NODE_MS} ms a search`,
        verdict: verdict(overNodePerSearch <= SEARCH_PROCESS_OVER_NODE_MS),
        key: `search.${keyOf(label)}.process`,
        figures: { oursMs: cliSample.median, grepMs: grep.median, ratio: cliSample.median / grep.median, nodeMs: node.median, overNodePerSearchMs: overNodePerSearch, targetOverNodePerSearchMs: SEARCH_PROCESS_OVER_NODE_MS },
      },
    ];
  };
  rows.push(...(await searchRows(SEARCH_ROOT, "warm", storage)));

  // ---- Japanese, Korean and Chinese text: the index cold, its bytes, substrings against grep -rlF
  const cjkRoot = join(SCRATCH_DIR, "search-cjk");
  const cjk = writeCjkStore(cjkRoot);
  const cjkWhat = `${cjk.files} sessions of Japanese, Korean and Chinese text, ${(cjk.bytes / 1e6).toFixed(0)} MB`;
  const cjkStorage = nodeFsStorage({ root: cjkRoot });
  let cjkCold: SearchIndexProgress | undefined;
  const cjkStart = performance.now();
  await searchSessions(cjkStorage, cjk.queries[0]!, { onProgress: (p) => (cjkCold = p) });
  const cjkColdMs = performance.now() - cjkStart;
  const textRate = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
  rows.push({
    name: `cold index build, ${cjkWhat}; text indexed per second vs the ${what} (same run)`,
    ours: `${formatMs(cjkColdMs)}: ${cjkCold!.filesDone} files; ${textRate(cjk.textBytes, cjkColdMs).toFixed(1)} MB of text/s`,
    peer: `${textRate(textBytes, coldMs).toFixed(1)} MB of text/s`,
    ratio: ratio(textRate(cjk.textBytes, cjkColdMs) / textRate(textBytes, coldMs)),
    target: "—",
    verdict: "info",
    key: "search.cjk.coldIndex",
    figures: { ms: cjkColdMs, files: cjkCold!.filesDone, bytesRead: cjkCold!.bytesDone, textBytes: cjk.textBytes, ratioOfTextRate: textRate(cjk.textBytes, cjkColdMs) / textRate(textBytes, coldMs) },
  });
  const cjkIndexBytes = statSync(join(cjkRoot, SEARCH_DIR, "text.sqlite")).size;
  rows.push({
    name: "index bytes vs the Japanese, Korean and Chinese user + assistant text it indexes",
    ours: `${(cjkIndexBytes / 1e6).toFixed(1)} MB`,
    peer: `text ${(cjk.textBytes / 1e6).toFixed(1)} MB (the other store's index: ${((100 * indexBytes) / textBytes).toFixed(1)} % of its text)`,
    ratio: `${((100 * cjkIndexBytes) / cjk.textBytes).toFixed(1)} %`,
    target: "—",
    verdict: "info",
    key: "search.cjk.indexSize",
    figures: { indexBytes: cjkIndexBytes, textBytes: cjk.textBytes, ratio: cjkIndexBytes / cjk.textBytes },
  });
  let sameAsGrep = 0;
  for (const query of cjk.queries) {
    const found = new Set((await searchSessions(cjkStorage, query, { limit: Infinity })).map((hit) => join(cjkRoot, hit.path)));
    const expected = grepFiles(cjkRoot, query);
    if (found.size === expected.size && [...found].every((path) => expected.has(path))) sameAsGrep++;
  }
  rows.push({
    name: `${cjk.queries.length} substrings (1 to 4 characters) of the runs of that text: the sessions search finds are those \`grep -rlF\` finds`,
    ours: `${sameAsGrep} of ${cjk.queries.length} the same`,
    peer: "grep -rlF",
    ratio: "",
    target: "all",
    verdict: verdict(sameAsGrep === cjk.queries.length),
    key: "search.cjk.sameAsGrep",
    figures: { queries: cjk.queries.length, same: sameAsGrep },
  });
  // grep's time grows with the store's bytes (22 MB here, all of it text), search's with the hits:
  // the peer is the single words' search of the 300-session store, in the same rounds (each block
  // after an untimed search, as one process keeps one index open). A quarter of the substrings are
  // one character, which FTS5 reads as a prefix of every bigram starting with it: within 2×.
  const cjkTotals = { api: [] as number[], grep: [] as number[], words: [] as number[] };
  const timed = async (port: StoragePort, queries: readonly string[]) => {
    await searchSessions(port, queries[0]!, { limit: 20 });
    const start = performance.now();
    for (const query of queries) await searchSessions(port, query, { limit: 20 });
    return performance.now() - start;
  };
  for (let round = 0; round < runs; round++) {
    cjkTotals.words.push(await timed(storage, words));
    cjkTotals.api.push(await timed(cjkStorage, cjk.queries));
    cjkTotals.grep.push(cjk.queries.reduce((ms, query) => ms + processMs("grep", ["-rlF", query, join(cjkRoot, "sessions")]), 0));
  }
  const [cjkApi, cjkGrep, wordsApi] = [summarize(cjkTotals.api), summarize(cjkTotals.grep), summarize(cjkTotals.words)];
  const substringMs = cjkApi.median / cjk.queries.length;
  const wordMs = wordsApi.median / words.length;
  rows.push({
    name: `searchSessions (in-process, limit 20) of the ${cjk.queries.length} substrings, per query, vs the ${words.length} single words' of the ${what}, same rounds`,
    ours: `${formatMs(substringMs)} (${cjk.queries.length} in ${timing(cjkApi)}; \`grep -rlF\` of each: ${timing(cjkGrep)})`,
    peer: `${formatMs(wordMs)} (${words.length} in ${timing(wordsApi)})`,
    ratio: ratio(substringMs / wordMs),
    target: "≤ 2×",
    verdict: verdict(substringMs / wordMs <= 2),
    key: "search.cjk.inProcess",
    figures: { oursMs: cjkApi.median, perQueryMs: substringMs, wordsMs: wordsApi.median, wordPerQueryMs: wordMs, ratioToWord: substringMs / wordMs, grepMs: cjkGrep.median, ratioToGrep: cjkApi.median / cjkGrep.median },
  });
  await cjkStorage.close();
  await storage.close();
  rmSync(cjkRoot, { recursive: true, force: true });

  // ---- 100 appends to 10 sessions (pi appends), then the same searches
  const sessionFiles = readdirSync(join(SEARCH_ROOT, "sessions")).flatMap((dir) =>
    readdirSync(join(SEARCH_ROOT, "sessions", dir)).map((name) => join(SEARCH_ROOT, "sessions", dir, name)),
  );
  const targets = sessionFiles.filter((_, i) => i % 30 === 7).slice(0, 10);
  const scratch = scratchStore(new Set(targets));
  // The CLI's index of the copy starts as the original's, as the API's does (copied with .sessionkit/).
  rmSync(cliCache(scratch), { recursive: true, force: true });
  cpSync(cliCache(SEARCH_ROOT), cliCache(scratch), { recursive: true });
  let appended = 0;
  for (const target of targets) {
    const path = join(scratch, target.slice(SEARCH_ROOT.length + 1));
    const before = statSync(path).size;
    const pi = PiSessionManager.open(path);
    for (let i = 0; i < 10; i++) pi.appendMessage({ role: "user", content: `appended note ${i}: ${words[i % words.length]} again`, timestamp: Date.now() } as never);
    appended += statSync(path).size - before;
  }
  const scratchStorage = countingStorage(nodeFsStorage({ root: scratch }));
  let update: SearchIndexProgress | undefined;
  const updateStart = performance.now();
  await searchSessions(scratchStorage, words[0]!, { limit: 20, onProgress: (p) => (update = p) });
  const updateMs = performance.now() - updateStart;
  rows.push({
    name: "after 100 appends to 10 sessions: the first search (index update + query); session bytes scanned vs bytes appended",
    ours: `${formatMs(updateMs)}; scanned ${update?.bytesDone ?? 0} B of ${update?.filesDone ?? 0} files (all reads of session files: ${scratchStorage.sessionBytes} B, with headers, fingerprints and the hits' lines)`,
    peer: `appended ${appended} B`,
    ratio: ratio((update?.bytesDone ?? 0) / appended),
    target: "= 1× (only the appended bytes)",
    verdict: verdict(update?.bytesDone === appended && update.filesDone === targets.length),
    key: "search.afterAppends",
    figures: { updateMs, bytesScanned: update?.bytesDone ?? 0, bytesAppended: appended, files: update?.filesDone ?? 0 },
  });
  rows.push(...(await searchRows(scratch, "after the appends", scratchStorage)));
  await scratchStorage.close?.();
  rmSync(scratch, { recursive: true, force: true });

  return {
    rows,
    notes: [
      `search store: ${what}, every session written by pi with its own seed from a 50,000-word Zipf vocabulary (bench/lib/data.ts); user + assistant text ${(textBytes / 1e6).toFixed(1)} MB.`,
      "listing: whole processes are the bundled CLI (`node sessionkit.mjs --root … ls --all --json`, stdout discarded; its catalog and index in a scratch $XDG_CACHE_HOME) and `node -e` importing pi's SessionManager and printing listAll() as JSON, with PI_CODING_AGENT_DIR at the store; warm = a previous call wrote the catalog; cold = the CLI's catalog deleted before the call.",
      `search: ${WORDS} words of message text spread from the rarest to the most common (by how many sessions hold them): ${words.join(", ")}; ${runs} rounds; each round sums the ${WORDS} searches. grep -rlF stops at a file's first match, so common words are its best case. The whole-process rows include Node's start and loading SQLite's WASM module; \`node -e 0\` runs once per word in the same rounds, and the target is on the time past it.`,
      `Japanese, Korean and Chinese: ${cjkWhat} (segments of TypeScript's translated diagnostic messages drawn as often as they occur there, bench/lib/cjk-text.ts), user + assistant text ${(cjk.textBytes / 1e6).toFixed(1)} MB; queries: ${cjk.queries.join(", ")}.`,
      "after appends: a copy of the store (hard links, real copies of the 10 changed files and the index); pi's SessionManager appends 10 user messages to each of 10 sessions; the first search updates the index from each file's last indexed offset.",
    ],
  };
}
