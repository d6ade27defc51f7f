/**
 * The viewer section of `npm run bench:browser`: pi's own HTML export (made by the installed pi
 * package's exportFromFile) against ours (the viewer's export template, filled by the code behind
 * `sessionkit export --html`), for sessions of 1k, 10k and 100k entries written by pi
 * (test/shared/viewer-session.ts), each opened from file:// in the same Chromium, one fresh page each:
 * - time to first meaningful render: navigation start → the first message element in the DOM
 *   (pi: a child of #messages; ours: #messages .entry), taken by a MutationObserver in the page;
 * - DOM nodes once rendered;
 * - the longest task while loading (PerformanceObserver "longtask");
 * - scrolling: the message list and the tree scrolled end to end (60 steps each, a frame apart):
 *   the longest task and the tasks over 200 ms.
 * pi gets LIMIT_MS per size; a page that errors or never renders counts as failed, with why.
 * Prints a table and writes bench/browser/viewer-results.md. Also runs alone: `tsx bench/browser/viewer.ts
 * [--sizes 1000,10000] [--template FILE] [--skip-pi] [--throttle N]`, for comparing builds:
 * `--template` measures an export template built elsewhere (e.g. from another commit) instead of
 * building this tree's; `--throttle N` slows the pages' CPU N times (CDP
 * Emulation.setCPUThrottlingRate), a steadier stand-in for a loaded machine than the load itself.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium, type Browser, type Page } from "playwright";
import { build } from "vite";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import { buildExportHtml, EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";
import { ensureViewerSession, VIEWER_DATA_DIR } from "../../test/shared/viewer-session.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT = join(HERE, "..", "..");
export const VIEWER_PROJECT = PROJECT;
const RESULTS = join(HERE, "viewer-results.md");
const SIZES = [1_000, 10_000, 100_000];
const LIMIT_MS = 120_000;
const SCROLL_STEPS = 60;
const TARGET = { timeRatio: 0.5, nodes: 3000, taskMs: 200 };

interface Measured {
  ok: boolean;
  failure?: string;
  renderMs?: number;
  nodes?: number;
  loadLongestTask?: number;
  scrollLongestTask?: number;
  scrollTasksOver200?: number;
  htmlBytes: number;
}

const log = (message: string) => process.stderr.write(`[bench:browser viewer] ${message}\n`);

/** pi's exportFromFile, from the installed package (imported by path: its index loads the whole agent). */
async function piExport(session: string, out: string): Promise<void> {
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

async function measure(browser: Browser, file: string, kind: "pi" | "ours", throttle = 1): Promise<Measured> {
  const htmlBytes = (await stat(file)).size;
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript((selector) => {
    const w = window as unknown as { __bench: { firstRender: number | null; long: number[] } };
    w.__bench = { firstRender: null, long: [] };
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) w.__bench.long.push(entry.duration);
    }).observe({ type: "longtask", buffered: true });
    new MutationObserver((_, observer) => {
      if (document.querySelector(selector)) {
        w.__bench.firstRender = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  }, kind === "pi" ? "#messages > *" : "#messages .entry");
  const page = await context.newPage();
  if (throttle > 1) await (await context.newCDPSession(page)).send("Emulation.setCPUThrottlingRate", { rate: throttle });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("crash", () => errors.push("page crashed"));
  try {
    await page.goto(pathToFileURL(file).href, { timeout: LIMIT_MS, waitUntil: "load" }).catch((error: Error) => errors.push(error.message.split("\n")[0]!));
    const rendered = await page
      .waitForFunction(() => (window as unknown as { __bench: { firstRender: number | null } }).__bench.firstRender !== null, null, { timeout: LIMIT_MS, polling: 100 })
      .then(() => true)
      .catch(() => false);
    if (!rendered) return { ok: false, failure: errors[0] ?? `nothing rendered in ${LIMIT_MS / 1000} s`, htmlBytes };
    if (kind === "ours") await page.waitForFunction(() => document.body.dataset.status === "ready", null, { timeout: LIMIT_MS });
    // Let the work that follows the first render (pi renders everything at once) finish.
    await page.waitForTimeout(500);
    const loaded = await page.evaluate(() => {
      const w = window as unknown as { __bench: { firstRender: number; long: number[] } };
      const result = { renderMs: w.__bench.firstRender, nodes: document.querySelectorAll("*").length, loadLongestTask: Math.max(0, ...w.__bench.long) };
      w.__bench.long = [];
      return result;
    });
    await scrollEndToEnd(page, kind === "pi" ? ["#content", "#tree-container"] : ["#messages", "#tree"]);
    const scroll = await page.evaluate(() => {
      const long = (window as unknown as { __bench: { long: number[] } }).__bench.long;
      return { scrollLongestTask: Math.max(0, ...long), scrollTasksOver200: long.filter((d) => d > 200).length };
    });
    if (errors.length > 0 && kind === "pi") return { ok: false, failure: errors[0], htmlBytes };
    return { ok: true, ...loaded, ...scroll, htmlBytes };
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

const ms = (value: number | undefined) => (value === undefined ? "—" : `${Math.round(value)} ms`);
const verdict = (pass: boolean) => (pass ? "PASS" : "**FAIL**");

export interface ViewerSectionOptions {
  sizes?: number[];
  /** An export template to measure instead of building this tree's. */
  template?: string;
  skipPi?: boolean;
  /** CPU slowdown factor for the pages (1: none). */
  throttle?: number;
}

export async function runViewerSection(options: ViewerSectionOptions = {}): Promise<string> {
  const started = new Date();
  const work = join(VIEWER_DATA_DIR, "build");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  if (!options.template) {
    log("building the viewer (export template)");
    await build({ configFile: join(PROJECT, "web-demo", "vite.config.ts"), logLevel: "silent", build: { outDir: join(work, "dist"), emptyOutDir: true } });
  }
  const template = await readFile(options.template ?? join(work, "dist", EXPORT_TEMPLATE_FILE), "utf8");
  const browser = await chromium.launch({ executablePath: chromiumExecutable, args: [...chromiumArgs, "--js-flags=--max-old-space-size=4096"], headless: true });
  const rows: string[] = [];
  const raw: string[] = [];
  try {
    for (const size of options.sizes ?? SIZES) {
      const session = ensureViewerSession(size);
      log(`${size} entries: ${session.entries} entries, ${session.bytes} bytes`);
      const piFile = join(work, `pi-${size}.html`);
      const ourFile = join(work, `ours-${size}.html`);
      if (!options.skipPi) await piExport(session.path, piFile);
      await ourExport(template, session.path, ourFile);
      const pi: Measured = options.skipPi ? { ok: false, failure: "not measured (--skip-pi)", htmlBytes: 0 } : await measure(browser, piFile, "pi", options.throttle);
      log(`pi ${size}: ${JSON.stringify(pi)}`);
      const ours = await measure(browser, ourFile, "ours", options.throttle);
      log(`ours ${size}: ${JSON.stringify(ours)}`);
      raw.push(`| ${size.toLocaleString("en")} | pi | ${JSON.stringify(pi)} |`, `| ${size.toLocaleString("en")} | ours | ${JSON.stringify(ours)} |`);
      const n = session.entries.toLocaleString("en");
      const ratio = pi.ok && ours.ok ? ours.renderMs! / pi.renderMs! : undefined;
      rows.push(
        `| ${n} | first meaningful render | ${ours.ok ? ms(ours.renderMs) : `failed: ${ours.failure}`} | ${pi.ok ? ms(pi.renderMs) : `pi failed: ${pi.failure}`} | ${ratio === undefined ? "—" : `${ratio.toFixed(2)}×`} | ours renders; ≤ ${TARGET.timeRatio}× pi where pi renders | ${verdict(ours.ok && (ratio === undefined || ratio <= TARGET.timeRatio))} |`,
        `| ${n} | DOM nodes | ${ours.nodes ?? "—"} | ${pi.nodes ?? "—"} | — | ≤ ${TARGET.nodes} | ${verdict(ours.ok && ours.nodes! <= TARGET.nodes)} |`,
        `| ${n} | longest task while loading | ${ms(ours.loadLongestTask)} | ${ms(pi.loadLongestTask)} | — | — | — |`,
        `| ${n} | scrolling messages and tree end to end: longest task (tasks over 200 ms) | ${ms(ours.scrollLongestTask)} (${ours.scrollTasksOver200 ?? "—"}) | ${pi.ok ? `${ms(pi.scrollLongestTask)} (${pi.scrollTasksOver200})` : "—"} | — | ≤ ${TARGET.taskMs} ms | ${verdict(ours.ok && ours.scrollLongestTask! <= TARGET.taskMs)} |`,
        `| ${n} | HTML file size | ${(ours.htmlBytes / 1e6).toFixed(1)} MB | ${(pi.htmlBytes / 1e6).toFixed(1)} MB | — | — | — |`,
      );
    }
  } finally {
    await browser.close();
  }
  const table = ["| entries | measurement | ours | pi's export | ratio | target | result |", "|---|---|---|---|---:|---|---|", ...rows].join("\n");
  const report = `# Viewer bench: pi's HTML export vs ours

Generated by \`npm run bench:browser\` (bench/browser/viewer.ts) at ${started.toISOString()}; ${cpus()[0]?.model ?? "?"} × ${cpus().length}, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(" / ")} (a VM shared with other engineers). Chromium ${chromiumExecutable}, headless, 1400×900, each file opened from file:// in a fresh context.

${table}

Sessions written by pi's SessionManager (test/shared/viewer-session.ts): turns of user → (assistant tool call → tool result)* → answer, with branches, branch summaries, compactions, labels, model and thinking changes; ~1.2 KB per entry. pi's file is its \`exportFromFile\` of the session; ours is the viewer's export template filled as \`sessionkit export --html\` fills it. First render is from navigation start to the first message element; "longest task" is the longest PerformanceObserver long task; scrolling moves each list's scrollTop end to end in ${SCROLL_STEPS} steps, one frame apart. pi had ${LIMIT_MS / 1000} s per file.

## Every measurement

| entries | export | measured |
|---|---|---|
${raw.join("\n")}
`;
  await writeFile(RESULTS, report);
  log(`wrote ${RESULTS}`);
  process.stdout.write(`\n${table}\n`);
  return table;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { sizes: { type: "string" }, template: { type: "string" }, "skip-pi": { type: "boolean", default: false }, throttle: { type: "string", default: "1" } } });
  await runViewerSection({ sizes: values.sizes?.split(",").map(Number), template: values.template, skipPi: values["skip-pi"], throttle: Number(values.throttle) });
}
