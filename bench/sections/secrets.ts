/**
 * Secrets: recall on a generated set (every kind planted in every field: all must be found, and
 * none may be left in a redacted zip, HTML page or JSONL file written by the CLI); false findings
 * on the 23 real corpus sessions, each listed; scan throughput against a bare read and a parse of
 * the same files; a cold scan against a warm one, which the cache in .sessionkit/secrets answers.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { scanSessionFile, scanSessions, type SecretFinding } from "../../src/secrets/index.js";
import { SECRETS_DIR } from "../../src/secrets/scan.js";
import { readSince } from "../../src/session/file-resume.js";
import { bundleCli, runCli } from "../../test/shared/cli-runner.js";
import { CORPUS_DIR } from "../../test/shared/corpus.js";
import { sessionOfPage, writeBareExportTemplate, zipMembers } from "../../test/shared/exported-text.js";
import { mulberry32 } from "../../test/shared/prng.js";
import { PLANTED_FIELDS, SECRET_KINDS, writePlantedSessions, type PlantedSecret } from "../../test/shared/planted-secrets.js";
import { SCRATCH_DIR } from "../lib/data.js";
import { formatMs, interleave } from "../lib/measure.js";
import { ratio, verdict, type Row } from "../lib/report.js";

const ROOT = join(SCRATCH_DIR, "secrets");
/** Copies of the corpus in the throughput store: ~62 MB, enough for a stable rate. */
const CORPUS_COPIES = 4;

const where = (item: { path: string; entryId: string | null; field: string }) => `${item.path} ${item.entryId} ${item.field}`;

/** Planted secrets left in `text`: whole, or any line of one, as written or JSON-escaped. */
function survivors(text: string, planted: readonly PlantedSecret[]): PlantedSecret[] {
  return planted.filter((plant) => plant.secret.split("\n").some((part) => text.includes(part) || text.includes(JSON.stringify(part).slice(1, -1))));
}

async function recallRows(): Promise<Row[]> {
  const root = join(ROOT, "planted");
  rmSync(root, { recursive: true, force: true });
  const storage = nodeFsStorage({ root });
  const planted = await writePlantedSessions(storage, "/bench/secrets", mulberry32(24));
  const { findings } = await scanSessions(storage, { cache: false });
  await storage.close();
  const found = new Map(findings.map((finding) => [where(finding), finding]));
  const missed = planted.filter((plant) => found.get(where(plant))?.kind !== plant.kind);
  const extra = findings.length - (planted.length - missed.length);
  const rows: Row[] = [
    {
      key: "secrets.recall",
      name: `secrets: recall, ${SECRET_KINDS.length} kinds × ${PLANTED_FIELDS.length} fields (found with their entry, field and kind)`,
      ours: `${planted.length - missed.length} of ${planted.length}, ${extra} other findings`,
      peer: "—",
      ratio: "—",
      target: "all, none other",
      verdict: verdict(missed.length === 0 && extra === 0),
      figures: { planted: planted.length, found: planted.length - missed.length, missed: missed.length, extra },
    },
  ];

  // The exports as a user makes them: the bundled CLI, as child processes.
  const pkg = join(ROOT, "pkg");
  mkdirSync(join(pkg, "cli"), { recursive: true });
  const cli = await bundleCli(join(pkg, "cli"));
  await writeBareExportTemplate(pkg);
  const out = join(ROOT, "out");
  mkdirSync(out, { recursive: true });
  const sessions = [...new Set(planted.map((plant) => plant.path))];
  const fileOf = (path: string) => join(root, ...path.split("/"));
  const sk = async (...args: string[]) => {
    const result = await runCli(cli, ["--root", root, ...args]);
    if (result.code !== 0) throw new Error(`sessionkit ${args.join(" ")}: ${result.stderr}`);
  };
  await sk("export", ...sessions.map(fileOf), "-o", join(out, "all.zip"), "--redact", "--force");
  const zipText = [...(await zipMembers(readFileSync(join(out, "all.zip")))).values()].map((bytes) => new TextDecoder().decode(bytes)).join("\n");
  let htmlText = "";
  let jsonlText = "";
  for (const [i, path] of sessions.entries()) {
    await sk("export", "--html", fileOf(path), "-o", join(out, `${i}.html`), "--force");
    const html = readFileSync(join(out, `${i}.html`), "utf8");
    htmlText += html + sessionOfPage(html);
    await sk("export", "--jsonl", "--redact", fileOf(path), "-o", join(out, `${i}.jsonl`), "--force");
    jsonlText += readFileSync(join(out, `${i}.jsonl`), "utf8");
  }
  for (const [format, text] of [["zip (--redact)", zipText], ["html (default)", htmlText], ["jsonl (--redact)", jsonlText]] as const) {
    const left = survivors(text, planted).length;
    rows.push({
      key: `secrets.redacted.${format.split(" ")[0]}`,
      name: `secrets: planted secrets left in a redacted ${format} export`,
      ours: String(left),
      peer: `${planted.length} planted`,
      ratio: "—",
      target: "0",
      verdict: verdict(left === 0),
      figures: { planted: planted.length, left },
    });
  }
  return rows;
}

/** The corpus's session files, as paths under CORPUS_DIR. */
function corpusFiles(): string[] {
  return readdirSync(CORPUS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => readdirSync(join(CORPUS_DIR, entry.name)).filter((name) => name.endsWith(".jsonl")).map((name) => `${entry.name}/${name}`))
    .sort();
}

async function corpusRow(): Promise<{ row: Row; notes: string[] }> {
  const storage = nodeFsStorage({ root: CORPUS_DIR });
  const files = corpusFiles();
  const findings: SecretFinding[] = [];
  for (const file of files) findings.push(...((await scanSessionFile(storage, file)) ?? []));
  await storage.close();
  const notes = findings.map((finding) => `corpus finding: ${finding.path} entry ${finding.entryId ?? "(header)"} ${finding.field}: ${finding.kind} ${finding.preview}`);
  return {
    row: {
      key: "secrets.corpus",
      name: `secrets: findings on the ${files.length} real corpus sessions (each listed below the table)`,
      ours: String(findings.length),
      peer: "—",
      ratio: "—",
      target: "only what a reader would call suspicious",
      verdict: "info",
      figures: { sessions: files.length, findings: findings.length },
    },
    notes: findings.length === 0 ? [`secrets: no finding on the ${files.length} corpus sessions (docs/benchmarks.md says what they hold that is not flagged)`] : notes,
  };
}

async function throughputRows(runs: number): Promise<Row[]> {
  const root = join(ROOT, "corpus");
  rmSync(root, { recursive: true, force: true });
  const files = corpusFiles();
  for (let copy = 0; copy < CORPUS_COPIES; copy++) {
    for (const file of files) cpSync(join(CORPUS_DIR, file), join(root, "sessions", `--copy-${copy}-${file.split("/")[0]}--`, file.split("/")[1]!));
  }
  const paths = readdirSync(join(root, "sessions")).flatMap((dir) => readdirSync(join(root, "sessions", dir)).map((name) => `sessions/${dir}/${name}`));
  const bytes = paths.reduce((n, path) => n + statSync(join(root, path)).size, 0);
  const storage = nodeFsStorage({ root });
  const dropCache = () => rmSync(join(root, SECRETS_DIR), { recursive: true, force: true });
  const results = await interleave<unknown>(
    [
      { name: "bare read", run: async () => { for (const path of paths) await storage.read(path); } },
      { name: "read + parse", run: async () => { for (const path of paths) await readSince(storage, path, { size: 0, mtimeMs: 0 }, undefined, () => {}, () => {}); } },
      { name: "scan", run: () => scanSessions(storage, { cache: false }) },
      { name: "scan cold (cache written)", before: dropCache, run: () => scanSessions(storage) },
      { name: "scan warm (cache read)", before: async () => void (await scanSessions(storage)), run: () => scanSessions(storage) },
    ],
    runs,
  );
  await storage.close();
  const ms = (name: string) => results.get(name)!.sample.median;
  const rate = (name: string) => bytes / 1e6 / (ms(name) / 1000);
  const mbps = (name: string) => `${rate(name).toFixed(1)} MB/s`;
  return [
    {
      key: "secrets.throughput",
      name: `secrets: scan throughput (${paths.length} sessions, ${(bytes / 1e6).toFixed(1)} MB: the corpus ×${CORPUS_COPIES}), vs a bare read of the same files`,
      ours: `${mbps("scan")} (${formatMs(ms("scan"))})`,
      peer: `${mbps("bare read")} bare read; ${mbps("read + parse")} read + parse`,
      ratio: ratio(rate("scan") / rate("bare read")),
      target: "—",
      verdict: "info",
      figures: { files: paths.length, bytes, scanMs: ms("scan"), bareReadMs: ms("bare read"), parseMs: ms("read + parse"), scanPerSec: bytes / (ms("scan") / 1000), bareReadPerSec: bytes / (ms("bare read") / 1000) },
    },
    {
      key: "secrets.cache",
      name: "secrets: an unchanged store scanned again (the cache answers) vs its cold scan",
      ours: formatMs(ms("scan warm (cache read)")),
      peer: `${formatMs(ms("scan cold (cache written)"))} cold`,
      ratio: ratio(ms("scan warm (cache read)") / ms("scan cold (cache written)")),
      target: "≤ 0.05×",
      verdict: verdict(ms("scan warm (cache read)") / ms("scan cold (cache written)") <= 0.05),
      figures: { warmMs: ms("scan warm (cache read)"), coldMs: ms("scan cold (cache written)") },
    },
  ];
}

export async function benchSecrets(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  try {
    const recall = await recallRows();
    const corpus = await corpusRow();
    const throughput = await throughputRows(runs);
    return {
      rows: [...recall, corpus.row, ...throughput],
      notes: [
        `secrets: the planted set is test/shared/planted-secrets.ts (${SECRET_KINDS.length} kinds, each in ${PLANTED_FIELDS.length} places: ${PLANTED_FIELDS.join(", ")}); exports by the bundled CLI; a survivor is looked for whole, line by line and JSON-escaped (in the HTML, in the page and in its decoded session)`,
        ...corpus.notes,
      ],
    };
  } finally {
    rmSync(ROOT, { recursive: true, force: true });
  }
}
