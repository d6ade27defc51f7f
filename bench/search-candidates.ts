/**
 * `npx tsx bench/search-candidates.ts [store-root ...]`: how the search index was chosen. Builds
 * the same index (user and assistant message text, one document per entry, prefix queries) with
 * MiniSearch, FlexSearch and SQLite FTS5 (@sqlite.org/sqlite-wasm), and measures build time, the
 * serialized index's bytes against the text's bytes, and a warm query as a fresh `sessionkit
 * search` process sees it: read the serialized index from disk, load it, run one single-word query.
 * Defaults to the corpus and the 300-session search store of `npm run bench`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import FlexSearch from "flexsearch";
import MiniSearch from "minisearch";
import sqlite3InitModule from "@sqlite.org/sqlite-wasm";
import { BENCH_DIR, ensureSearchStore, SCRATCH_DIR, SEARCH_ROOT } from "./lib/data.js";

interface Doc {
  id: number;
  text: string;
}

function sessionFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".jsonl")) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block): block is { type: string; text: string } => block?.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n");
}

function collectDocs(roots: string[]): Doc[] {
  const docs: Doc[] = [];
  for (const root of roots) {
    for (const file of sessionFiles(root)) {
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (!line) continue;
        let record: { type?: string; message?: { role?: string; content?: unknown } };
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        const role = record.message?.role;
        if (record.type !== "message" || (role !== "user" && role !== "assistant")) continue;
        const text = textOf(record.message!.content);
        if (text) docs.push({ id: docs.length, text });
      }
    }
  }
  return docs;
}

/** Words spread over document frequency: the rarest to the most common. */
function queryWords(docs: Doc[], count: number): string[] {
  const df = new Map<string, number>();
  for (const doc of docs.slice(0, 20_000)) {
    for (const word of new Set(doc.text.toLowerCase().match(/[a-z]{4,}/g) ?? [])) df.set(word, (df.get(word) ?? 0) + 1);
  }
  const sorted = [...df.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  return Array.from({ length: count }, (_, i) => sorted[Math.floor(((i + 0.5) * sorted.length) / count)]![0]);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

interface Candidate {
  name: string;
  /** Builds the index and returns its serialized form. */
  build(docs: Doc[]): Promise<Uint8Array>;
  /** Loads a serialized index and returns the ids matching `word` (prefix), best first. */
  query(bytes: Uint8Array, word: string): Promise<number[]>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const sqlite3 = await sqlite3InitModule();

const candidates: Candidate[] = [
  {
    name: "MiniSearch 7.2.0",
    async build(docs) {
      const index = new MiniSearch<Doc>({ fields: ["text"] });
      index.addAll(docs);
      return encoder.encode(JSON.stringify(index));
    },
    async query(bytes, word) {
      const index = MiniSearch.loadJSON<Doc>(decoder.decode(bytes), { fields: ["text"] });
      return index.search(word, { prefix: true }).slice(0, 20).map((hit) => hit.id as number);
    },
  },
  {
    name: "FlexSearch 0.8.212",
    async build(docs) {
      const index = new FlexSearch.Index({ tokenize: "forward" });
      for (const doc of docs) index.add(doc.id, doc.text);
      const parts: Record<string, string> = {};
      await index.export((key: string, data: string) => void (parts[key] = data));
      return encoder.encode(JSON.stringify(parts));
    },
    async query(bytes, word) {
      const index = new FlexSearch.Index({ tokenize: "forward" });
      const parts = JSON.parse(decoder.decode(bytes)) as Record<string, string>;
      for (const [key, data] of Object.entries(parts)) await index.import(key, data);
      return (index.search(word, 20) as number[]).slice(0, 20);
    },
  },
  ...(["full", "column", "none"] as const).map((detail): Candidate => ({
    name: `SQLite FTS5 (sqlite-wasm 3.50.4, contentless, detail=${detail})`,
    async build(docs) {
      const db = new sqlite3.oo1.DB(":memory:");
      db.exec(`CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, detail=${detail}, tokenize='unicode61 remove_diacritics 0 tokenchars ''_''')`);
      db.exec("BEGIN");
      const insert = db.prepare("INSERT INTO fts(rowid, text) VALUES (?, ?)");
      for (const doc of docs) insert.bind([doc.id, doc.text]).stepReset();
      insert.finalize();
      db.exec("COMMIT");
      db.exec("INSERT INTO fts(fts) VALUES('optimize'); VACUUM");
      const bytes = sqlite3.capi.sqlite3_js_db_export(db);
      db.close();
      return bytes;
    },
    async query(bytes, word) {
      const db = new sqlite3.oo1.DB();
      const pointer = sqlite3.wasm.allocFromTypedArray(bytes);
      const flags = sqlite3.capi.SQLITE_DESERIALIZE_FREEONCLOSE | sqlite3.capi.SQLITE_DESERIALIZE_READONLY;
      if (sqlite3.capi.sqlite3_deserialize(db.pointer!, "main", pointer, bytes.length, bytes.length, flags) !== 0) throw new Error("deserialize failed");
      const ids = db.selectValues("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 20", [`"${word}"*`]) as number[];
      db.close();
      return ids;
    },
  })),
];

async function measure(label: string, roots: string[]): Promise<string[]> {
  const docs = collectDocs(roots);
  const textBytes = docs.reduce((n, doc) => n + encoder.encode(doc.text).length, 0);
  const words = queryWords(docs, 15);
  const lines = [`### ${label}: ${docs.length} entries, ${(textBytes / 1e6).toFixed(1)} MB of user + assistant text`, "", `| library | build | index bytes / text bytes | warm query (read + load + query), median of ${words.length} words | hits for the words |`, "|---|--:|--:|--:|--:|"];
  const dir = join(SCRATCH_DIR, "search-candidates");
  mkdirSync(dir, { recursive: true });
  for (const candidate of candidates.filter((c) => !process.env.CANDIDATES || c.name.includes(process.env.CANDIDATES))) {
    const started = performance.now();
    const bytes = await candidate.build(docs);
    const buildMs = performance.now() - started;
    const file = join(dir, "index.bin");
    writeFileSync(file, bytes);
    const times: number[] = [];
    let hits = 0;
    for (const word of words) {
      const start = performance.now();
      const raw = readFileSync(file);
      const ids = await candidate.query(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), word);
      times.push(performance.now() - start);
      hits += ids.length;
    }
    lines.push(`| ${candidate.name} | ${buildMs.toFixed(0)} ms | ${(bytes.length / 1e6).toFixed(1)} MB / ${(textBytes / 1e6).toFixed(1)} MB = ${((100 * bytes.length) / textBytes).toFixed(0)} % | ${median(times).toFixed(1)} ms | ${hits} |`);
    process.stderr.write(`${lines.at(-1)}\n`);
  }
  rmSync(dir, { recursive: true, force: true });
  return [...lines, ""];
}

const roots = process.argv.slice(2);
const report: string[] = [];
if (roots.length > 0) report.push(...(await measure(roots.join(", "), roots)));
else {
  report.push(...(await measure("the corpus (23 real sessions)", [join(BENCH_DIR, "..", "test", "fixtures", "corpus")])));
  ensureSearchStore();
  report.push(...(await measure("the search store (300 pi-written sessions, 10 projects)", [SEARCH_ROOT])));
}
process.stdout.write(report.join("\n"));
