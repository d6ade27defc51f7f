/**
 * The viewer section of `npm run bench:browser` (alone: `npm run bench:browser -- --only viewer`):
 * pi's own HTML export (made by the installed pi package's exportFromFile) against ours, the
 * viewer's export template filled by the code behind `sessionkit export --html` (opened from
 * file://) and the viewer as `sessionkit serve` serves it (a server process of its own,
 * ./serve-process.ts, the session opened by its address), for sessions written by pi
 * (test/shared/viewer-session.ts) of ~47 entries (52 KB: a small session), 1k, 10k and 100k
 * entries, all in the same Chromium, a fresh context (empty cache) per page:
 * - first entry visible: navigation start → the first frame that lays a message element out inside
 *   the viewport (pi: a child of #messages; ours: #messages .entry): an IntersectionObserver on
 *   each as a MutationObserver sees it arrive, its entry's time; the median of SMALL_ROUNDS pages
 *   for a small session, ROUNDS up to 1,000 entries, LARGE_ROUNDS above (their pages take
 *   seconds), pi, export and serve taking turns, in reverse order every other round;
 * - DOM nodes once loaded, and the longest task while loading (PerformanceObserver "longtask");
 * - scrolling (once per file): the message list and the tree scrolled end to end (60 steps each,
 *   a frame apart): the longest task and the tasks over 200 ms.
 * pi gets LIMIT_MS per page; a page that errors or never renders counts as failed, with why (pi's
 * failure at a size ends its rounds there). Prints a table and writes bench/browser/viewer-results.md.
 * Also runs alone: `tsx bench/browser/viewer.ts [--sizes 40,1000] [--rounds N] [--dist DIR]
 * [--skip-pi] [--throttle N]`, for comparing builds: `--dist` measures a viewer build made
 * elsewhere (`vite build web-demo`'s output, e.g. from another commit: its export template and its
 * app) instead of building this tree's; `--throttle N` slows the pages' CPU N times (CDP
 * Emulation.setCPUThrottlingRate), a steadier stand-in for a loaded machine than the load itself.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { link, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import { build } from "vite";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";
import { ensureViewerSession, VIEWER_DATA_DIR } from "../../test/shared/viewer-session.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT = join(HERE, "..", "..");
export const VIEWER_PROJECT = PROJECT;
const RESULTS = join(HERE, "viewer-results.md");
/** The small session: 40 asked for, 47 written (52 KB), as a short chat is. */
const SMALL = 40;
const SIZES = [SMALL, 1_000, 10_000, 100_000];
/**
 * Pages per kind and size. A small session's page is one short load that this machine's load
 * moves by up to 2×: over 9 pages the median of pi's moved from 194 to 173 ms between two runs 16
 * minutes apart, and the served page's ratio with it (0.77× to 1.00×, one build); 25 pages cost the
 * section about a minute more.
 */
const SMALL_ROUNDS = 25;
const ROUNDS = 9;
const LARGE_ROUNDS = 3;
const LIMIT_MS = 120_000;
const SCROLL_STEPS = 60;
/** First entry visible against pi's: ≤ 1× for a session of up to SMALL_MAX_ENTRIES entries, ≤ 0.5× from 1,000. */
const TARGET = { smallRatio: 1, ratio: 0.5, nodes: 3000, taskMs: 200 };
const SMALL_MAX_ENTRIES = 100;

export type Kind = "pi" | "export" | "serve";

interface Load {
  ok: boolean;
  failure?: string;
  /** Navigation start → the first message element in the DOM. */
  inDomMs?: number;
  /** Navigation start → the first frame that lays one out inside the viewport. */
  visibleMs?: number;
  nodes?: number;
  loadLongestTask?: number;
}

interface Scroll {
  longestTask: number;
  tasksOver200: number;
}

interface Measured {
  loads: Load[];
  scroll?: Scroll;
}

const log = (message: string) => process.stderr.write(`[bench:browser viewer] ${message}\n`);

/** pi's exportFromFile, from the installed package (imported by path: its index loads the whole agent). */
export async function piExport(session: string, out: string): Promise<void> {
  const module = (await import(pathToFileURL(join(PROJECT, "node_modules/@mariozechner/pi-coding-agent/dist/core/export-html/index.js")).href)) as {
    exportFromFile: (input: string, options: { outputPath: string }) => Promise<string>;
  };
  await module.exportFromFile(session, { outputPath: out });
}

export async function ourExport(template: string, session: string, out: string): Promise<void> {
  const storage = nodeFsStorage({ root: dirname(session) });
  try {
    const { parts } = await buildExportHtml(template, { storage, path: basename(session), title: basename(session) });
    await writeFile(out, parts);
  } finally {
    await storage.close();
  }
}

/** What a page logs (console.debug) when it has laid its first entry out in the viewport. */
const FIRST_VISIBLE_SIGNAL = "sessionkit-bench: first entry visible";

/**
 * Resolves true once `page` (watched by watchFirstEntry) has shown its first entry, false after
 * `timeoutMs`. Call it before loading the page: pi's and the exported pages show theirs before `load`.
 */
export function firstEntryShown(page: Page, timeoutMs: number): Promise<boolean> {
  return page
    .waitForEvent("console", { predicate: (message) => message.text() === FIRST_VISIBLE_SIGNAL, timeout: timeoutMs })
    .then(() => true)
    .catch(() => false);
}

/**
 * Puts `window.__bench` in every page of `context`: `inDom` (performance.now() when a message
 * element first arrives), `visible` (the time of the frame that first lays one out inside the
 * viewport) and the long tasks' durations.
 */
export async function watchFirstEntry(context: BrowserContext, kind: Kind): Promise<void> {
  await context.addInitScript(({ selector, signal }) => {
    const w = window as unknown as { __bench: { inDom: number | null; visible: number | null; long: number[] } };
    w.__bench = { inDom: null, visible: null, long: [] };
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) w.__bench.long.push(entry.duration);
    }).observe({ type: "longtask", buffered: true });
    // Visible: laid out inside the viewport (not clipped away by a scroller), as the frame's intersection step finds it.
    const visibility = new IntersectionObserver((entries) => {
      const shown = entries.find((entry) => entry.isIntersecting && entry.intersectionRect.width > 0 && entry.intersectionRect.height > 0);
      if (!shown || w.__bench.visible !== null) return;
      w.__bench.visible = shown.time;
      visibility.disconnect();
      added.disconnect();
      // Told over the DevTools protocol's console events: waiting by polling would run Playwright's
      // injected script in the page (~11 ms of its main thread) while a served page still boots.
      console.debug(signal);
    });
    const added = new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (!(node instanceof Element)) continue;
          const found = [...(node.matches(selector) ? [node] : []), ...node.querySelectorAll(selector)];
          if (found.length > 0) w.__bench.inDom ??= performance.now();
          for (const element of found) visibility.observe(element);
        }
      }
    });
    added.observe(document, { childList: true, subtree: true });
  }, { selector: kind === "pi" ? "#messages > *" : "#messages .entry", signal: FIRST_VISIBLE_SIGNAL });
}

/** One page load of `url` in a fresh context: first entry visible, nodes, longest load task; then, if asked, scrolling. */
async function measure(browser: Browser, url: string, kind: Kind, options: { throttle: number; scroll: boolean }): Promise<{ load: Load; scroll?: Scroll }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await watchFirstEntry(context, kind);
  const page = await context.newPage();
  if (options.throttle > 1) await (await context.newCDPSession(page)).send("Emulation.setCPUThrottlingRate", { rate: options.throttle });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("crash", () => errors.push("page crashed"));
  const firstVisible = firstEntryShown(page, LIMIT_MS);
  try {
    await page.goto(url, { timeout: LIMIT_MS, waitUntil: "load" }).catch((error: Error) => errors.push(error.message.split("\n")[0]!));
    const visible = await firstVisible;
    if (!visible) return { load: { ok: false, failure: errors[0] ?? `nothing rendered in ${LIMIT_MS / 1000} s` } };
    if (kind !== "pi") await page.waitForFunction(() => document.body.dataset.status === "ready", null, { timeout: LIMIT_MS });
    // Let the work that follows the first render (pi renders everything at once) finish.
    await page.waitForTimeout(500);
    const loaded = await page.evaluate(() => {
      const w = window as unknown as { __bench: { inDom: number; visible: number; long: number[] } };
      const result = { inDomMs: w.__bench.inDom, visibleMs: w.__bench.visible, nodes: document.querySelectorAll("*").length, loadLongestTask: Math.max(0, ...w.__bench.long) };
      w.__bench.long = [];
      return result;
    });
    if (errors.length > 0 && kind === "pi") return { load: { ok: false, failure: errors[0] } };
    if (!options.scroll) return { load: { ok: true, ...loaded } };
    await scrollEndToEnd(page, kind === "pi" ? ["#content", "#tree-container"] : ["#messages", "#tree"]);
    const scroll = await page.evaluate(() => {
      const long = (window as unknown as { __bench: { long: number[] } }).__bench.long;
      return { longestTask: Math.max(0, ...long), tasksOver200: long.filter((d) => d > 200).length };
    });
    return { load: { ok: true, ...loaded }, scroll };
  } finally {
    await context.close();
  }
}

/** Scrolls each list's scrollTop from top to bottom in SCROLL_STEPS steps, a frame apart, then lets the last work finish. */
export async function scrollEndToEnd(page: Page, scrollers: string[]): Promise<void> {
  await page.evaluate(
    async ({ scrollers, steps }) => {
      for (const selector of scrollers) {
        const element = document.querySelector(selector);
        if (!element) continue;
        for (let i = 0; i <= steps; i++) {
          element.scrollTop = ((element.scrollHeight - element.clientHeight) * i) / steps;
          await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    },
    { scrollers, steps: SCROLL_STEPS },
  );
}

/** `sessionkit serve` (./serve-process.ts) over `root` with the viewer build `dist`, until stopped. */
export async function startServeProcess(dist: string, root: string, cacheDir: string): Promise<{ url: string; store: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(HERE, "serve-process.ts"), dist, root, cacheDir], { cwd: PROJECT, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (data: Buffer) => {
      out += data.toString("utf8");
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("exit", (code) => reject(new Error(`the serve process ended (exit ${code}) before it listened`)));
  });
  const { url, store } = JSON.parse(line) as { url: string; store: string };
  return {
    url,
    store,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (value: number | undefined) => (value === undefined ? "—" : `${Math.round(value)} ms`);
const verdict = (pass: boolean) => (pass ? "PASS" : "**FAIL**");

/** The median of a figure over the loads that rendered; undefined when one failed. */
function summary(measured: Measured | undefined, figure: "visibleMs" | "inDomMs" | "nodes" | "loadLongestTask"): number | undefined {
  if (!measured || measured.loads.some((load) => !load.ok)) return undefined;
  return median(measured.loads.map((load) => load[figure]!));
}
const failure = (measured: Measured | undefined) => measured?.loads.find((load) => !load.ok)?.failure;
/** "348 ms (301–420)": the median and the range over the rounds. */
function visibleCell(measured: Measured, who: string): string {
  const why = failure(measured);
  if (why !== undefined) return `${who} failed: ${why}`;
  const values = measured.loads.map((load) => load.visibleMs!);
  return `${ms(median(values))} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
}

export interface ViewerSectionOptions {
  sizes?: number[];
  rounds?: number;
  /** A viewer build (`vite build web-demo` output) to measure instead of building this tree's. */
  dist?: string;
  skipPi?: boolean;
  /** CPU slowdown factor for the pages (1: none). */
  throttle?: number;
}

export async function runViewerSection(options: ViewerSectionOptions = {}): Promise<string> {
  const started = new Date();
  const sizes = options.sizes ?? SIZES;
  const roundsOf = (entries: number) => options.rounds ?? (entries <= SMALL_MAX_ENTRIES ? SMALL_ROUNDS : entries <= 1_000 ? ROUNDS : LARGE_ROUNDS);
  const throttle = options.throttle ?? 1;
  const work = join(VIEWER_DATA_DIR, "build");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const dist = options.dist ?? join(work, "dist");
  if (!options.dist) {
    log("building the viewer (app and export template)");
    await build({ configFile: join(PROJECT, "web-demo", "vite.config.ts"), logLevel: "silent", build: { outDir: dist, emptyOutDir: true } });
  }
  const template = await readFile(join(dist, EXPORT_TEMPLATE_FILE), "utf8");
  // The served store: each size's session, linked in (the largest is 120 MB).
  const storeRoot = join(work, "store");
  const sessions = new Map<number, { path: string; entries: number; bytes: number; storagePath: string }>();
  for (const size of sizes) {
    const session = ensureViewerSession(size);
    const storagePath = `sessions/--bench-viewer--/${size}.jsonl`;
    await mkdir(join(storeRoot, "sessions", "--bench-viewer--"), { recursive: true });
    await link(session.path, join(storeRoot, storagePath));
    sessions.set(size, { ...session, storagePath });
  }
  const serve = await startServeProcess(dist, storeRoot, join(work, "serve-cache"));
  const browser = await chromium.launch({ executablePath: chromiumExecutable, args: [...chromiumArgs, "--js-flags=--max-old-space-size=4096"], headless: true });
  const rows: string[] = [];
  const raw: string[] = [];
  try {
    for (const size of sizes) {
      const session = sessions.get(size)!;
      log(`${size} entries: ${session.entries} entries, ${session.bytes} bytes`);
      const piFile = join(work, `pi-${size}.html`);
      const ourFile = join(work, `ours-${size}.html`);
      if (!options.skipPi) await piExport(session.path, piFile);
      await ourExport(template, session.path, ourFile);
      const urls: Record<Kind, string> = {
        pi: pathToFileURL(piFile).href,
        export: pathToFileURL(ourFile).href,
        serve: `${serve.url}#${new URLSearchParams({ store: serve.store, session: session.storagePath }).toString()}`,
      };
      const kinds: Kind[] = options.skipPi ? ["export", "serve"] : ["pi", "export", "serve"];
      const results = new Map<Kind, Measured>(kinds.map((kind) => [kind, { loads: [] }]));
      const rounds = roundsOf(session.entries);
      for (let round = 0; round < rounds; round++) {
        // Each kind's page follows each other's as often: a page loads while the last one's context closes.
        for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
          const measured = results.get(kind)!;
          if (failure(measured) !== undefined) continue; // a failure repeats: pi at 10k entries and more
          const { load, scroll } = await measure(browser, urls[kind], kind, { throttle, scroll: round === 0 && kind !== "serve" });
          measured.loads.push(load);
          if (scroll) measured.scroll = scroll;
          log(`${kind} ${size} round ${round + 1}: ${JSON.stringify({ ...load, ...scroll })}`);
        }
      }
      const pi = results.get("pi");
      const ours = results.get("export")!;
      const served = results.get("serve")!;
      const n = session.entries.toLocaleString("en");
      for (const kind of kinds) raw.push(`| ${n} | ${kind} | ${JSON.stringify(results.get(kind))} |`);
      const small = session.entries <= SMALL_MAX_ENTRIES;
      const targetRatio = small ? TARGET.smallRatio : TARGET.ratio;
      const piPaint = summary(pi, "visibleMs");
      const visibleRow = (what: string, measured: Measured) => {
        const mine = summary(measured, "visibleMs");
        const ratio = mine !== undefined && piPaint !== undefined ? mine / piPaint : undefined;
        // pi failing (10k entries and more) leaves ours to render at all; not measuring pi judges nothing.
        const result = !pi ? "—" : verdict(mine !== undefined && (ratio !== undefined ? ratio <= targetRatio : !small));
        return `| ${n} | first entry visible, ${what} | ${visibleCell(measured, "ours")} | ${pi ? visibleCell(pi, "pi") : "not measured"} | ${ratio === undefined ? "—" : `${ratio.toFixed(2)}×`} | ≤ ${targetRatio}× pi${small ? "" : " where pi renders; ours renders"} | ${result} |`;
      };
      const both = (figure: "nodes" | "loadLongestTask", format: (value: number | undefined) => string) => `${format(summary(ours, figure))} / ${format(summary(served, figure))}`;
      const count = (value: number | undefined) => (value === undefined ? "—" : String(Math.round(value)));
      const htmlBytes = async (file: string) => ((await stat(file).catch(() => null))?.size ?? 0) / 1e6;
      rows.push(
        visibleRow("HTML export (file://)", ours),
        visibleRow("sessionkit serve", served),
        `| ${n} | DOM nodes, export / serve | ${both("nodes", count)} | ${count(summary(pi, "nodes"))} | — | ≤ ${TARGET.nodes} | ${verdict(Math.max(summary(ours, "nodes") ?? Infinity, summary(served, "nodes") ?? Infinity) <= TARGET.nodes)} |`,
        `| ${n} | longest task while loading, export / serve | ${both("loadLongestTask", ms)} | ${ms(summary(pi, "loadLongestTask"))} | — | — | — |`,
        `| ${n} | scrolling messages and tree end to end (export): longest task (tasks over 200 ms) | ${ours.scroll ? `${ms(ours.scroll.longestTask)} (${ours.scroll.tasksOver200})` : "—"} | ${pi?.scroll ? `${ms(pi.scroll.longestTask)} (${pi.scroll.tasksOver200})` : "—"} | — | ≤ ${TARGET.taskMs} ms | ${verdict(ours.scroll !== undefined && ours.scroll.longestTask <= TARGET.taskMs)} |`,
        `| ${n} | HTML file size | ${(await htmlBytes(ourFile)).toFixed(1)} MB | ${(await htmlBytes(piFile)).toFixed(1)} MB | — | — | — |`,
      );
    }
  } finally {
    await browser.close();
    await serve.stop();
  }
  const roundsText = options.rounds === undefined ? `${SMALL_ROUNDS} pages for the small session, ${ROUNDS} up to 1,000 entries, ${LARGE_ROUNDS} above` : `${options.rounds} pages`;
  const table = ["| entries | measurement | ours | pi's export | ratio | target | result |", "|---|---|---|---|---:|---|---|", ...rows].join("\n");
  const report = `# Viewer bench: pi's HTML export vs ours

Generated by \`npm run bench:browser\` (bench/browser/viewer.ts) at ${started.toISOString()}; ${cpus()[0]?.model ?? "?"} × ${cpus().length}, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(" / ")} (a VM shared with other engineers). Chromium ${chromiumExecutable}, headless, 1400×900, each page in a fresh context (empty cache)${throttle > 1 ? `, CPU throttled ${throttle}×` : ""}.

${table}

Sessions written by pi's SessionManager (test/shared/viewer-session.ts): turns of user → (assistant tool call → tool result)* → answer, with branches, branch summaries, compactions, labels, model and thinking changes; ~1.2 KB per entry. pi's file is its \`exportFromFile\` of the session; the export is the viewer's export template filled as \`sessionkit export --html\` fills it, opened from file://; serve is \`sessionkit serve\`'s server (bench/browser/serve-process.ts, a process of its own, read-only, already running) over a store holding these sessions, the page opened at the session's address (\`http://127.0.0.1:PORT/?token=…#store=…&session=…\`, the printed URL with a link's fragment).

"First entry visible" runs from the navigation start of the page that shows the session (for serve, that address: the page's files, \`/api/stores\` and the session all load after it) to the first frame that lays a message element out inside the viewport (pi: \`#messages > *\`; ours: \`#messages .entry\`), taken in the page: an IntersectionObserver on each such element as a MutationObserver sees it arrive, the time of its first intersecting entry; the median of ${roundsText} (range in brackets), pi, export and serve taking turns (in reverse order every other round). DOM nodes and the longest load task are medians of the same pages; "longest task" is the longest PerformanceObserver long task. Scrolling (the first round's page) moves each list's scrollTop end to end in ${SCROLL_STEPS} steps, one frame apart. pi had ${LIMIT_MS / 1000} s per page.

## Every measurement

| entries | page | measured |
|---|---|---|
${raw.join("\n")}
`;
  await writeFile(RESULTS, report);
  log(`wrote ${RESULTS}`);
  process.stdout.write(`\n${table}\n`);
  return table;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { sizes: { type: "string" }, rounds: { type: "string" }, dist: { type: "string" }, "skip-pi": { type: "boolean", default: false }, throttle: { type: "string", default: "1" } },
  });
  await runViewerSection({
    sizes: values.sizes?.split(",").map(Number),
    rounds: values.rounds === undefined ? undefined : Number(values.rounds),
    dist: values.dist,
    skipPi: values["skip-pi"],
    throttle: Number(values.throttle),
  });
}
