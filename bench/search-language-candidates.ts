/**
 * `npx tsx bench/search-language-candidates.ts`: how search reads unspaced text and word forms
 * (src/search/words.ts) was chosen.
 *
 * 1. Chinese, Japanese and Korean. The texts of the corpus's messages holding such characters
 *    (user, assistant, thinking, tool output) with TypeScript's translated diagnostic messages (ja,
 *    ko, zh-cn, zh-tw; four to a document), and text drawn from those messages' segments as the
 *    bench's store is (bench/lib/cjk-text.ts), indexed as the search index is (contentless FTS5,
 *    detail=none, unicode61) with each run of such characters given to FTS5 as: itself (before),
 *    its bigrams (with its last character, or with every character), its trigrams,
 *    Intl.Segmenter's words, or a second FTS5 table with the trigram tokenizer. Index bytes and
 *    build time, and for queries drawn from the text (substrings of 1 to 4 characters of a run,
 *    and Intl.Segmenter words) the share of the documents holding the query (as grep -F finds
 *    them) that the index finds, and the query time (FTS5 candidates checked against the text).
 *
 * 2. Word forms. On the corpus's English words (user + assistant text): what a query word
 *    matches besides itself with Porter's steps 1 and 5 (ours), the whole Porter stemmer (FTS5's
 *    porter tokenizer) and prefix matching (`word*`), and the documents each adds.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import sqlite3InitModule, { type Database } from "@sqlite.org/sqlite-wasm";
import { inflectionStem, indexedText, runExpression, runTerms, UNSPACED_CHAR, wordForms } from "../src/search/words.js";
import { CJK_LANGUAGES, cjkTextSource, diagnosticMessages } from "./lib/cjk-text.js";
import { BENCH_DIR } from "./lib/data.js";
import { seededRandom, type Random } from "../test/shared/message-factory.js";

const CORPUS = join(BENCH_DIR, "..", "test", "fixtures", "corpus");
const encoder = new TextEncoder();
const sqlite3 = await sqlite3InitModule();
const RUN = new RegExp(`${UNSPACED_CHAR}+`, "gu");

interface Doc {
  text: string;
  language: string;
}

/** The corpus's message texts: user + assistant text, or (`all`) thinking and tool output too. */
function corpusDocs(all = false): Doc[] {
  const docs: Doc[] = [];
  for (const dir of readdirSync(CORPUS)) {
    if (!statSync(join(CORPUS, dir)).isDirectory()) continue;
    for (const name of readdirSync(join(CORPUS, dir)).filter((n) => n.endsWith(".jsonl"))) {
      for (const line of readFileSync(join(CORPUS, dir, name), "utf8").split("\n")) {
        let record: { type?: string; message?: { role?: string; content?: unknown } };
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        const message = record.message;
        if (record.type !== "message" || !message || (!all && message.role !== "user" && message.role !== "assistant")) continue;
        const content = message.content;
        const blocks = (b: { type?: string }) => b?.type === "text" || (all && b?.type === "thinking");
        const text =
          typeof content === "string"
            ? content
            : Array.isArray(content)
              ? content.filter(blocks).map((b: { text?: string; thinking?: string }) => b.text ?? b.thinking ?? "").join("\n")
              : "";
        if (text.trim() !== "") docs.push({ text, language: /\p{scx=Hiragana}|\p{scx=Katakana}/u.test(text) ? "ja" : /\p{scx=Han}/u.test(text) ? "zh" : /\p{scx=Hangul}/u.test(text) ? "ko" : "en" });
      }
    }
  }
  return docs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// ============================================================================
// 1. Unspaced text
// ============================================================================

const segmenter = new Intl.Segmenter(undefined, { granularity: "word" });
const segments = (run: string) => [...segmenter.segment(run)].map((s) => s.segment);

interface Variant {
  name: string;
  /** Extra table DDL; the text table is `fts` (unicode61), the variant's other one `cjk`. */
  build(db: Database, docs: readonly Doc[]): void;
  /** FTS5 expressions on `fts` and on `cjk` (null: none) for a query run; null: not supported. */
  query(run: string): { fts: string | null; cjk: string | null } | null;
}

const UNICODE61 = `tokenize='unicode61 remove_diacritics 0 tokenchars ''_'''`;

function unicode61Variant(name: string, transform: (text: string) => string, expression: (run: string) => string | null): Variant {
  return {
    name,
    build(db, docs) {
      db.exec(`CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, detail=none, ${UNICODE61})`);
      const insert = db.prepare("INSERT INTO fts(rowid, text) VALUES (?, ?)");
      docs.forEach((doc, i) => insert.bind([i + 1, transform(doc.text)]).stepReset());
      insert.finalize();
    },
    query(run) {
      const fts = expression(run);
      return fts === null ? null : { fts, cjk: null };
    },
  };
}

const replaceRuns = (text: string, terms: (run: string) => string[]) => text.replace(RUN, (run) => ` ${terms(run).join(" ")} `);

function trigramTerms(run: string): string[] {
  const chars = Array.from(run);
  const terms: string[] = [];
  for (let i = 0; i + 2 < chars.length; i++) terms.push(chars.slice(i, i + 3).join(""));
  if (chars.length >= 2) terms.push(chars.slice(-2).join(""));
  terms.push(chars.at(-1)!);
  return terms;
}

const variants: Variant[] = [
  unicode61Variant("unicode61 alone (before: a run is one word)", (text) => text, (run) => `"${run}"`),
  unicode61Variant("bigrams + a run's last character (ours)", indexedText, runExpression),
  unicode61Variant(
    "bigrams + every character",
    (text) => replaceRuns(text, (run) => [...runTerms(run).slice(0, -1), ...Array.from(run)]),
    (run) => (Array.from(run).length === 1 ? `"${run}"` : runExpression(run)),
  ),
  unicode61Variant(
    "trigrams + a run's last two and last character",
    (text) => replaceRuns(text, trigramTerms),
    (run) => {
      const chars = Array.from(run);
      if (chars.length < 3) return `"${run}"*`;
      const grams = new Set<string>();
      for (let i = 0; i + 2 < chars.length; i++) grams.add(chars.slice(i, i + 3).join(""));
      return [...grams].map((g) => `"${g}"`).join(" AND ");
    },
  ),
  unicode61Variant(
    "Intl.Segmenter words",
    (text) => replaceRuns(text, segments),
    (run) => [...new Set(segments(run))].map((w) => `"${w}"`).join(" AND "),
  ),
  {
    name: "FTS5 trigram tokenizer, a table of the runs",
    build(db, docs) {
      db.exec(`CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, detail=none, ${UNICODE61})`);
      db.exec(`CREATE VIRTUAL TABLE cjk USING fts5(text, content='', contentless_delete=1, detail=none, tokenize='trigram')`);
      const insert = db.prepare("INSERT INTO fts(rowid, text) VALUES (?, ?)");
      const insertRuns = db.prepare("INSERT INTO cjk(rowid, text) VALUES (?, ?)");
      docs.forEach((doc, i) => {
        insert.bind([i + 1, doc.text.replace(RUN, " ")]).stepReset();
        const runs = doc.text.match(RUN);
        if (runs) insertRuns.bind([i + 1, runs.join("\n")]).stepReset();
      });
      insert.finalize();
      insertRuns.finalize();
    },
    query(run) {
      const chars = Array.from(run);
      if (chars.length < 3) return null; // the trigram tokenizer matches nothing shorter
      const grams = new Set<string>();
      for (let i = 0; i + 2 < chars.length; i++) grams.add(chars.slice(i, i + 3).join(""));
      return { fts: null, cjk: [...grams].map((g) => `"${g}"`).join(" AND ") };
    },
  },
];

interface Query {
  text: string;
  kind: string;
  language: string;
}

function cjkQueries(docs: readonly Doc[], random: Random): Query[] {
  const queries: Query[] = [];
  const byLanguage = new Map<string, string[]>();
  for (const doc of docs) for (const run of doc.text.match(RUN) ?? []) (byLanguage.get(doc.language) ?? byLanguage.set(doc.language, []).get(doc.language)!).push(run);
  for (const [language, runs] of byLanguage) {
    for (let length = 1; length <= 4; length++) {
      const long = runs.filter((run) => Array.from(run).length >= length);
      for (let i = 0; i < 40; i++) {
        const chars = Array.from(pick(random, long));
        const at = Math.floor(random() * (chars.length - length + 1));
        queries.push({ text: chars.slice(at, at + length).join(""), kind: `${length} character${length > 1 ? "s" : ""}`, language });
      }
    }
    for (let i = 0; i < 40; i++) {
      const words = segments(pick(random, runs)).filter((w) => new RegExp(`^${UNSPACED_CHAR}+$`, "u").test(w));
      if (words.length > 0) queries.push({ text: pick(random, words), kind: "Intl.Segmenter word", language });
    }
  }
  return queries;
}

function exportBytes(db: Database): number {
  return sqlite3.capi.sqlite3_js_db_export(db).length;
}

/** The corpus's messages holding such characters and the translated messages, four to a document. */
function writtenDocs(): Doc[] {
  const docs = corpusDocs(true).filter((doc) => doc.language !== "en");
  for (const language of CJK_LANGUAGES) {
    const messages = diagnosticMessages(language);
    for (let i = 0; i < messages.length; i += 4) docs.push({ text: messages.slice(i, i + 4).join(language === "ko" ? " " : ""), language: language.slice(0, 2) });
  }
  return docs;
}

/** Documents drawn as the bench's store of such text is (bench/lib/cjk-text.ts): 1,000 per language. */
function drawnDocs(): Doc[] {
  const random = seededRandom(0xc1c);
  return CJK_LANGUAGES.flatMap((language) => {
    const text = cjkTextSource(language);
    return Array.from({ length: 1000 }, () => ({ text: text(random, 10 + Math.floor(random() * 390)), language: language.slice(0, 2) }));
  });
}

async function measureUnspaced(label: string, docs: readonly Doc[]): Promise<string[]> {
  const textBytes = docs.reduce((n, doc) => n + encoder.encode(doc.text).length, 0);
  const queries = cjkQueries(docs, seededRandom(20));
  const truth = queries.map((q) => new Set(docs.flatMap((doc, i) => (doc.text.includes(q.text) ? [i + 1] : []))));
  const kinds = [...new Set(queries.map((q) => q.kind))];
  const lines = [
    `### Unspaced text, ${label}: ${docs.length} documents, ${(textBytes / 1e6).toFixed(2)} MB; ${queries.length} queries`,
    "",
    `| index | bytes / text | build (median of 3) | found of what grep -F finds: ${kinds.join(" / ")} | query (median) |`,
    "|---|--:|--:|--:|--:|",
  ];
  // One build untimed first: the first variant's figures should not include warming up.
  const warm = new sqlite3.oo1.DB(":memory:");
  variants[0]!.build(warm, docs);
  warm.close();
  for (const variant of variants) {
    const builds: number[] = [];
    let db: Database | undefined;
    for (let round = 0; round < 3; round++) {
      db?.close();
      db = new sqlite3.oo1.DB(":memory:");
      const start = performance.now();
      db.exec("BEGIN");
      variant.build(db, docs);
      db.exec("COMMIT");
      db.exec(`INSERT INTO fts(fts) VALUES('optimize')`);
      if (variant.name.startsWith("FTS5 trigram")) db.exec(`INSERT INTO cjk(cjk) VALUES('optimize')`);
      db.exec("VACUUM");
      builds.push(performance.now() - start);
    }
    const bytes = exportBytes(db!);
    const found = new Map<string, [number, number]>(kinds.map((k) => [k, [0, 0]]));
    const times: number[] = [];
    queries.forEach((query, i) => {
      const expected = truth[i]!;
      const counts = found.get(query.kind)!;
      counts[1] += expected.size;
      const expressions = variant.query(query.text);
      if (!expressions) return;
      const start = performance.now();
      let ids: Set<number> | undefined;
      for (const [table, match] of [["fts", expressions.fts], ["cjk", expressions.cjk]] as const) {
        if (match === null) continue;
        const rows = new Set(db!.selectValues(`SELECT rowid FROM ${table} WHERE ${table} MATCH ?`, [match]) as number[]);
        ids = ids ? new Set([...ids].filter((id) => rows.has(id))) : rows;
      }
      const hits = [...(ids ?? [])].filter((id) => docs[id - 1]!.text.includes(query.text));
      times.push(performance.now() - start);
      counts[0] += hits.length;
    });
    db!.close();
    const share = kinds.map((k) => `${((100 * found.get(k)![0]) / found.get(k)![1]).toFixed(1)} %`).join(" / ");
    lines.push(`| ${variant.name} | ${(bytes / 1e6).toFixed(2)} MB, ${((100 * bytes) / textBytes).toFixed(0)} % | ${median(builds).toFixed(0)} ms | ${share} | ${times.length ? `${(median(times) * 1000).toFixed(0)} µs` : "—"} |`);
    process.stderr.write(`${lines.at(-1)}\n`);
  }
  return [...lines, ""];
}

// ============================================================================
// 2. Word forms
// ============================================================================

/** Each word's stem under FTS5's porter tokenizer (the whole algorithm). */
function porterStems(words: readonly string[]): Map<string, string> {
  const db = new sqlite3.oo1.DB(":memory:");
  db.exec("CREATE VIRTUAL TABLE p USING fts5(w, tokenize='porter ascii'); CREATE VIRTUAL TABLE v USING fts5vocab(p, 'instance')");
  db.exec("BEGIN");
  const insert = db.prepare("INSERT INTO p(rowid, w) VALUES (?, ?)");
  words.forEach((word, i) => insert.bind([i + 1, word]).stepReset());
  insert.finalize();
  db.exec("COMMIT");
  const stems = new Map<string, string>();
  for (const [doc, term] of db.selectArrays("SELECT doc, term FROM v") as [number, string][]) stems.set(words[doc - 1]!, term);
  db.close();
  return stems;
}

function measureForms(): string[] {
  const docs = corpusDocs();
  const docsOf = new Map<string, Set<number>>();
  docs.forEach((doc, i) => {
    for (const token of doc.text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) if (/^[a-z]{3,}$/.test(token)) (docsOf.get(token) ?? docsOf.set(token, new Set()).get(token)!).add(i);
  });
  const words = [...docsOf.keys()].sort();
  const porter = porterStems(words);
  const classes = (stemOf: (word: string) => string) => {
    const byStem = new Map<string, string[]>();
    for (const word of words) (byStem.get(stemOf(word)) ?? byStem.set(stemOf(word), []).get(stemOf(word))!).push(word);
    return (word: string) => byStem.get(stemOf(word))!;
  };
  const ours = classes(inflectionStem);
  const whole = classes((word) => porter.get(word)!);
  const sortedWords = words;
  const prefixed = (word: string) => {
    const out: string[] = [];
    let lo = 0;
    let hi = sortedWords.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sortedWords[mid]! < word) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sortedWords.length && sortedWords[i]!.startsWith(word); i++) out.push(sortedWords[i]!);
    return out;
  };
  // Our forms from the query side must be the corpus's words of the same stem.
  let formsMissed = 0;
  for (const word of words) {
    const forms = new Set(wordForms(word));
    formsMissed += ours(word).filter((other) => !forms.has(other)).length;
  }
  const lines = [
    `### Word forms: the corpus's ${words.length} distinct English words (a-z, three letters or more) of ${docs.length} user + assistant entries`,
    "",
    "| a query word matches | words matching another word | other words matched, per such word (mean) | of those, not its forms under ours: all (examples) | documents added, per query word (mean over all) |",
    "|---|--:|--:|--:|--:|",
  ];
  for (const [name, match] of [
    ["itself (before)", (word: string) => [word]],
    ["same stem, Porter steps 1 and 5 (ours)", ours],
    ["same stem, the whole Porter stemmer (FTS5 porter)", whole],
    ["words starting with it (word*)", prefixed],
  ] as const) {
    let matching = 0;
    let others = 0;
    let added = 0;
    const notForms: string[] = [];
    for (const word of words) {
      const matched = match(word);
      if (matched.length > 1) {
        matching++;
        others += matched.length - 1;
      }
      const forms = new Set(ours(word));
      for (const other of matched) if (!forms.has(other)) notForms.push(`${word} → ${other}`);
      const union = new Set<number>();
      for (const other of matched) for (const doc of docsOf.get(other)!) union.add(doc);
      added += union.size - docsOf.get(word)!.size;
    }
    const examples = notForms.filter((_, i) => i % Math.max(1, Math.floor(notForms.length / 8)) === 0).slice(0, 8);
    lines.push(`| ${name} | ${matching} (${((100 * matching) / words.length).toFixed(1)} %) | ${matching ? (others / matching).toFixed(2) : "0"} | ${notForms.length}${examples.length ? ` (${examples.join(", ")})` : ""} | ${(added / words.length).toFixed(2)} |`);
  }
  lines.push("", `Our forms (words.ts wordForms) miss ${formsMissed} of the corpus's words that share a word's stem.`, "");
  const groups = [...new Set(words.map((word) => ours(word).join(" ")))].filter((group) => group.includes(" "));
  lines.push(`Every group of the corpus's words that meet under ours (${groups.length}):`, "", groups.map((g) => `{${g.split(" ").join(", ")}}`).join(" "), "");
  return lines;
}

const report = [
  ...(await measureUnspaced("the corpus's messages holding such characters and the translated TypeScript messages, four to a document", writtenDocs())),
  ...(await measureUnspaced("drawn from the translated messages' segments as the bench's store is", drawnDocs())),
  ...measureForms(),
];
process.stdout.write(report.join("\n"));
