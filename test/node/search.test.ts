/**
 * searchSessions against grep: for words taken from message text, search finds exactly the
 * sessions `grep -F` finds in the files for the word's forms (quoted: for the word), over random
 * sessions written by SessionManager and over the corpus; for substrings of Japanese, Chinese and
 * Korean text, exactly the sessions `grep -F` finds for the substring; every hit points at an
 * entry holding the word. Then the index: updated from the last indexed offset (only appended
 * bytes are read), a rewrite and a removal are seen, a read-only or damaged index gives the same
 * results.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { parseQuery, snippetOf, unitPattern } from "../../src/search/query.js";
import { SEARCH_DIR } from "../../src/search/search-index.js";
import { wordForms } from "../../src/search/words.js";
import { SessionManager, StorageError, searchSessions, type SearchHit, type SearchIndexProgress, type StoragePort } from "../../src/index.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { mulberry32, type Rng } from "../shared/prng.js";

/** Session files (storage paths) that `grep -r -l <args>` finds under root/sessions. */
function grep(root: string, args: string[]): Promise<Set<string>> {
  return new Promise((resolve, reject) => {
    execFile("grep", ["-r", "-l", ...args, "sessions"], { cwd: root, env: { ...process.env, LC_ALL: "C.UTF-8" }, maxBuffer: 64 << 20 }, (error, stdout) => {
      if (error && error.code !== 1) return reject(error);
      resolve(new Set(stdout.split("\n").filter((line) => line.endsWith(".jsonl"))));
    });
  });
}

const sessionsOf = (hits: readonly SearchHit[]) => new Set(hits.map((hit) => hit.path));
/** The parts of a hit's snippet its matches mark. */
const marked = (hit: SearchHit) => hit.matches.map(([start, end]) => hit.snippet.slice(start, end));
const ALL = ["user", "assistant", "thinking", "tool"] as const;

// ============================================================================
// Random sessions: words of disjoint vocabularies per source
// ============================================================================

/** 8-letter words starting "zq" from letters g–z: never inside JSON keys, ids, hex or dates. */
function vocabulary(rng: Rng, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    let word = "zq";
    for (let i = 0; i < 6; i++) word += String.fromCharCode(103 + rng.int(20));
    words.add(word);
  }
  return [...words];
}

const SEPARATORS = [" ", " ", " ", ", ", ". ", "\n", "\n\n", " — ", " (", ") ", "\t", ": "];

function prose(rng: Rng, words: readonly string[], count: number): string {
  let text = rng.pick(words);
  for (let i = 1; i < count; i++) text += rng.pick(SEPARATORS) + rng.pick(words);
  return text;
}

interface Generated {
  root: string;
  /** Per session path, the texts written, by source (the generator's own record). */
  texts: Map<string, Record<(typeof ALL)[number], string[]>>;
  vocab: Record<"text" | "thinking" | "tool", string[]>;
}

async function generateStore(seed: number): Promise<Generated> {
  const rng = mulberry32(seed);
  const root = await mkdtemp(join(tmpdir(), "sk-search-"));
  const storage = nodeFsStorage({ root });
  const vocab = { text: vocabulary(rng, 60), thinking: vocabulary(rng, 25), tool: vocabulary(rng, 25) };
  const texts: Generated["texts"] = new Map();
  for (let project = 0; project < 3; project++) {
    for (let s = 0; s < 5; s++) {
      const sm = await SessionManager.create(storage, `/work/project-${project}`);
      // Each session draws from its own slice of the vocabularies, so words differ in how many sessions hold them.
      const slice = (words: string[]) => words.filter(() => rng.chance(0.35));
      const own = { text: slice(vocab.text), thinking: slice(vocab.thinking), tool: slice(vocab.tool) };
      if (own.text.length === 0) own.text.push(vocab.text[0]!);
      if (own.thinking.length === 0) own.thinking.push(vocab.thinking[0]!);
      if (own.tool.length === 0) own.tool.push(vocab.tool[0]!);
      const record: Record<(typeof ALL)[number], string[]> = { user: [], assistant: [], thinking: [], tool: [] };
      for (let turn = 0; turn < 1 + rng.int(4); turn++) {
        const user = prose(rng, own.text, 3 + rng.int(30));
        record.user.push(user);
        sm.appendMessage({ role: "user", content: rng.chance(0.5) ? user : [{ type: "text", text: user }], timestamp: Date.now() });
        const thinking = prose(rng, own.thinking, 5 + rng.int(20));
        const answer = prose(rng, own.text, 3 + rng.int(40));
        record.thinking.push(thinking);
        record.assistant.push(answer);
        sm.appendMessage({
          role: "assistant",
          content: [
            { type: "thinking", thinking },
            { type: "text", text: answer },
            { type: "toolCall", id: `call_${turn}`, name: "bash", arguments: { command: "ls" } },
          ],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: "toolUse",
          timestamp: Date.now(),
        });
        const output = prose(rng, own.tool, 5 + rng.int(60));
        record.tool.push(output);
        sm.appendMessage({ role: "toolResult", toolCallId: `call_${turn}`, toolName: "bash", content: [{ type: "text", text: output }], isError: false, timestamp: Date.now() });
      }
      await sm.flush();
      texts.set(sm.getSessionFile()!, record);
      await sm.close();
    }
  }
  await storage.close();
  return { root, texts, vocab };
}

describe("snippetOf", () => {
  it("marks every unit's matches in the snippet (a prefix as far as it goes; not inside a word), in order, overlapping ones merged", () => {
    const { units } = parseQuery('zeb* "zebras sleep" naps');
    const snippet = snippetOf("Zebras sleep standing up, in short naps. A zebra! Zebrafish? snaps", units.map(unitPattern));
    expect(snippet.matches.map(([start, end]) => snippet.text.slice(start, end))).toEqual(["Zebras sleep", "naps", "zeb", "Zeb"]);
    // Cut short: the offsets are the snippet's, after its leading "…".
    const cut = snippetOf(`${"x ".repeat(200)}zebras at the end`, parseQuery("zebras end").units.map(unitPattern), 40);
    expect(cut.text.startsWith("…")).toBe(true);
    expect(cut.matches.map(([start, end]) => cut.text.slice(start, end))).toEqual(["zebras", "end"]);
  });
});

describe("search: random sessions against grep -F", () => {
  let store: Generated;
  let storage: StoragePort;
  beforeAll(async () => {
    store = await generateStore(0x5ea2c4);
    storage = nodeFsStorage({ root: store.root });
  });
  afterAll(async () => {
    await storage.close?.();
    await rm(store.root, { recursive: true, force: true });
  });

  it("a word of user or assistant text: exactly the sessions grep -F finds for its forms, by default; quoted, for it alone", async () => {
    const vocabulary = new Set(Object.values(store.vocab).flat());
    for (const word of store.vocab.text) {
      // The text holds vocabulary words only: the forms that can be found are vocabulary words.
      const forms = wordForms(word).filter((form) => vocabulary.has(form));
      const hits = await searchSessions(storage, word, { limit: Infinity });
      expect(sessionsOf(hits), word).toEqual(await grep(store.root, ["-F", ...forms.flatMap((form) => ["-e", form])]));
      for (const hit of hits) expect(["user", "assistant"]).toContain(hit.source);
      expect(sessionsOf(await searchSessions(storage, `"${word}"`, { limit: Infinity })), `"${word}"`).toEqual(await grep(store.root, ["-F", word]));
    }
  });

  it("words of thinking and tool output: found only on request, then exactly where grep finds them", async () => {
    for (const [source, words] of [["thinking", store.vocab.thinking], ["tool", store.vocab.tool]] as const) {
      for (const word of words) {
        expect(await searchSessions(storage, word), `${word} by default`).toEqual([]);
        const hits = await searchSessions(storage, word, { sources: [source], limit: Infinity });
        expect(sessionsOf(hits), word).toEqual(await grep(store.root, ["-F", word]));
        expect(sessionsOf(await searchSessions(storage, word, { sources: ALL, limit: Infinity })), word).toEqual(sessionsOf(hits));
      }
    }
  });

  it("every hit points at an entry holding the word, in the source and role it names", async () => {
    for (const word of store.vocab.text.slice(0, 15)) {
      for (const hit of await searchSessions(storage, word, { sources: ALL, limit: Infinity })) {
        const sm = await SessionManager.open(storage, hit.path, { readOnly: true });
        const entry = sm.getEntry(hit.entryId!);
        await sm.close();
        expect(entry?.type, `${word}: ${hit.path} ${hit.entryId}`).toBe("message");
        const message = (entry as { message: { role: string; content: unknown } }).message;
        expect(message.role).toBe(hit.role);
        expect(JSON.stringify(message.content)).toContain(word);
        expect(hit.snippet).toContain(word);
        expect(marked(hit).map((text) => text.toLowerCase())).toContain(word.toLowerCase());
        expect(hit.sessionId).toBe(sm.getHeader()!.id);
      }
    }
  });

  it("phrases match words in a row (any separator), prefixes match word starts; hits are ranked", async () => {
    const rng = mulberry32(7);
    const boundary = String.raw`[^\p{L}\p{N}\p{Co}_]+`;
    for (let i = 0; i < 25; i++) {
      const [path, record] = rng.pick([...store.texts]);
      const words = rng.pick(record.user).split(new RegExp(boundary, "u"));
      if (words.length < 2) continue;
      const at = rng.int(words.length - 1);
      const [a, b] = [words[at]!, words[at + 1]!];
      const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${a}${boundary}${b}(?![\\p{L}\\p{N}_])`, "u");
      const expected = new Set([...store.texts].filter(([, r]) => [...r.user, ...r.assistant].some((text) => pattern.test(text))).map(([p]) => p));
      const hits = await searchSessions(storage, `"${a} ${b}"`, { limit: Infinity });
      expect(sessionsOf(hits), `"${a} ${b}"`).toEqual(expected);
      expect(expected.has(path)).toBe(true);
      const prefix = a.slice(0, 5);
      const prefixHits = await searchSessions(storage, `${prefix}*`, { limit: Infinity });
      const withPrefix = new Set([...store.texts].filter(([, r]) => [...r.user, ...r.assistant].some((text) => new RegExp(`(?<![\\p{L}\\p{N}_])${prefix}`, "u").test(text))).map(([p]) => p));
      expect(sessionsOf(prefixHits), `${prefix}*`).toEqual(withPrefix);
    }
    const ranked = await searchSessions(storage, store.vocab.text[1]!, { limit: 10 });
    expect(ranked.length).toBeGreaterThan(1);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.score).toBeGreaterThanOrEqual(ranked[i]!.score);
  });

  it("a query is never read as FTS5 syntax; a query without words finds nothing", async () => {
    for (const query of ['"', "*", "AND OR NOT", "NEAR(", "^x", "col:zq", '"" *', "-", "((("]) {
      await expect(searchSessions(storage, query), query).resolves.toBeInstanceOf(Array);
    }
    expect(await searchSessions(storage, "  ..  ")).toEqual([]);
  });
});

// ============================================================================
// Random sessions in Japanese, Chinese and Korean, and in English word forms
// ============================================================================

/** TypeScript's translated diagnostic messages: real sentences of each language. */
function translatedMessages(language: "ja" | "ko" | "zh-cn" | "zh-tw"): string[] {
  const file = createRequire(import.meta.url).resolve(`typescript/lib/${language}/diagnosticMessages.generated.json`);
  return Object.values(JSON.parse(readFileSync(file, "utf8")) as Record<string, string>);
}

const UNSPACED_RUN = /(?:(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])+/gu;

describe("search: Japanese, Chinese and Korean sessions against grep -F", () => {
  let root: string;
  let storage: StoragePort;
  /** Texts written per session path, in every source. */
  const written = new Map<string, string[]>();

  beforeAll(async () => {
    const rng = mulberry32(0xc1c);
    root = await mkdtemp(join(tmpdir(), "sk-search-cjk-"));
    storage = nodeFsStorage({ root });
    for (const language of ["ja", "ko", "zh-cn", "zh-tw"] as const) {
      // 200 sentences per language, so that substrings recur across sessions.
      const sentences = translatedMessages(language).filter(() => rng.chance(0.1)).slice(0, 200);
      const text = (min: number, max: number) => Array.from({ length: rng.between(min, max) }, () => rng.pick(sentences)).join(language === "ko" ? " " : "");
      for (let s = 0; s < 4; s++) {
        const sm = await SessionManager.create(storage, `/work/${language}`);
        const texts: string[] = [];
        for (let turn = 0; turn < 2 + rng.int(4); turn++) {
          const [question, answer, output] = [text(1, 2), text(2, 6), text(1, 3)];
          // The first session thinks of something no other text says.
          const thinking = (written.size === 0 && turn === 0 ? "ここだけの考えごと。" : "") + text(1, 2);
          texts.push(question, thinking, answer, output);
          sm.appendMessage({ role: "user", content: question, timestamp: Date.now() });
          sm.appendMessage({
            role: "assistant",
            content: [{ type: "thinking", thinking }, { type: "text", text: answer }, { type: "toolCall", id: `call_${turn}`, name: "bash", arguments: { command: "ls" } }],
            api: "x", provider: "x", model: "x",
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "toolUse",
            timestamp: Date.now(),
          });
          sm.appendMessage({ role: "toolResult", toolCallId: `call_${turn}`, toolName: "bash", content: [{ type: "text", text: output }], isError: false, timestamp: Date.now() });
        }
        await sm.flush();
        written.set(sm.getSessionFile()!, texts);
        await sm.close();
      }
    }
  });
  afterAll(async () => {
    await storage.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("substrings of 1 to 6 characters of a run: exactly the sessions grep -F finds; every hit's text holds it", async () => {
    const rng = mulberry32(5);
    const runs = [...written.values()].flat().flatMap((text) => text.match(UNSPACED_RUN) ?? []);
    const seen = new Set<string>();
    for (let i = 0; i < 120; i++) {
      const chars = Array.from(rng.pick(runs));
      const length = Math.min(chars.length, 1 + (i % 6));
      const at = rng.int(chars.length - length + 1);
      const query = chars.slice(at, at + length).join("");
      if (seen.has(query)) continue;
      seen.add(query);
      const hits = await searchSessions(storage, query, { sources: ALL, limit: Infinity });
      expect(sessionsOf(hits), query).toEqual(await grep(root, ["-F", query]));
      for (const hit of hits) {
        expect(hit.snippet, query).toContain(query);
        expect(marked(hit).some((text) => text.includes(query)), query).toBe(true);
      }
    }
    expect(seen.size).toBeGreaterThan(90);
  });

  it("by default only user and assistant text; the limit keeps the best", async () => {
    const [path, texts] = [...written][0]!;
    const [question] = texts;
    const inQuestion = question!.match(UNSPACED_RUN)!.sort((a, b) => b.length - a.length)[0]!;
    const expected = new Set([...written].filter(([, t]) => t.some((text, i) => i % 4 !== 1 && i % 4 !== 3 && text.includes(inQuestion))).map(([p]) => p));
    expect(sessionsOf(await searchSessions(storage, inQuestion, { limit: Infinity }))).toEqual(expected);
    expect(expected.has(path)).toBe(true);
    expect(await searchSessions(storage, "だけの考え")).toEqual([]);
    expect(sessionsOf(await searchSessions(storage, "だけの考え", { sources: ["thinking"], limit: Infinity }))).toEqual(new Set([path]));
    const all = await searchSessions(storage, "の", { sources: ALL, limit: Infinity });
    const best = await searchSessions(storage, "の", { sources: ALL, limit: 3 });
    expect(all.length).toBeGreaterThan(3);
    expect(best.map((hit) => hit.score)).toEqual(all.slice(0, 3).map((hit) => hit.score));
  });
});

describe("search: English word forms against grep -F -w -i", () => {
  const families = [
    ["redirect", "redirects", "redirected", "redirecting", "redirection", "redirections"],
    ["policy", "policies", "policyholder"],
    ["apply", "applies", "applied", "applying", "application"],
    ["change", "changes", "changed", "changing", "changelog"],
    ["control", "controls", "controlled", "controlling", "controller"],
    ["hope", "hopes", "hoped", "hoping", "hop", "hops", "hopped", "hopping"],
    ["index", "indexes", "indexed", "indexing", "indices"],
    ["run", "runs", "running", "runner", "rerun"],
    ["ask", "asks", "asked", "asking", "asker", "as"],
    ["class", "classes", "classed", "classify"],
  ];
  // No escapes in the JSON (grep -w would read "\nword" as "nword"); no family word is a JSON key or value.
  const SEPARATORS = [" ", " ", ", ", ". ", " (", ") ", ": ", " — "];
  let root: string;
  let storage: StoragePort;
  const written = new Map<string, string[]>();

  beforeAll(async () => {
    const rng = mulberry32(0xf0f);
    root = await mkdtemp(join(tmpdir(), "sk-search-forms-"));
    storage = nodeFsStorage({ root });
    for (let s = 0; s < 24; s++) {
      const sm = await SessionManager.create(storage, "/work/forms");
      // Each session draws from a few words of a few families, written as they come (some capitalized).
      const own = families.filter(() => rng.chance(0.4)).flatMap((family) => family.filter(() => rng.chance(0.3)));
      if (own.length === 0) own.push("redirect");
      const prose = () => {
        let text = "";
        for (let i = 0, n = 2 + rng.int(12); i < n; i++) {
          const word = rng.pick(own);
          text += (i > 0 ? rng.pick(SEPARATORS) : "") + (rng.chance(0.2) ? word[0]!.toUpperCase() + word.slice(1) : word);
        }
        return text;
      };
      const texts = [prose(), prose()];
      sm.appendMessage({ role: "user", content: texts[0]!, timestamp: Date.now() });
      sm.appendMessage({ role: "assistant", content: [{ type: "text", text: texts[1]! }], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() });
      await sm.flush();
      written.set(sm.getSessionFile()!, texts);
      await sm.close();
    }
  });
  afterAll(async () => {
    await storage.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("a bare word: exactly the sessions grep -F -w -i finds for its forms; quoted or a prefix: as written", async () => {
    let widened = 0;
    for (const word of families.flat()) {
      const forms = wordForms(word);
      const expected = await grep(root, ["-F", "-w", "-i", ...forms.flatMap((form) => ["-e", form])]);
      expect(sessionsOf(await searchSessions(storage, word, { limit: Infinity })), word).toEqual(expected);
      const exact = await grep(root, ["-F", "-w", "-i", word]);
      expect(sessionsOf(await searchSessions(storage, `"${word}"`, { limit: Infinity })), `"${word}"`).toEqual(exact);
      if (expected.size > exact.size) widened++;
      const prefix = word.slice(0, 4);
      const startsWord = new RegExp(`(?<![\\p{L}\\p{N}_])${prefix}`, "iu");
      const withPrefix = new Set([...written].filter(([, texts]) => texts.some((text) => startsWord.test(text))).map(([path]) => path));
      expect(sessionsOf(await searchSessions(storage, `${prefix}*`, { limit: Infinity })), `${prefix}*`).toEqual(withPrefix);
    }
    expect(widened).toBeGreaterThan(10);
  });

  it("redirects finds redirect, redirected and redirecting, not redirection; the snippet shows the form found", async () => {
    const hits = await searchSessions(storage, "redirects", { limit: Infinity });
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) {
      expect(hit.snippet).toMatch(/(?<![A-Za-z0-9_])redirect(s|ed|ing)?(?![A-Za-z0-9_])/i);
      // What is marked is the form found, never "redirection".
      expect(marked(hit).length).toBeGreaterThan(0);
      for (const text of marked(hit)) expect(text).toMatch(/^redirect(s|ed|ing)?$/i);
    }
    const derived = await searchSessions(storage, "redirection", { limit: Infinity });
    for (const hit of derived) expect(hit.snippet).toMatch(/(?<![A-Za-z0-9_])redirections?(?![A-Za-z0-9_])/i);
  });
});

// ============================================================================
// The corpus
// ============================================================================

/** The file with every searchable text blanked: what grep sees besides message text. */
function structureOnly(content: string): string {
  return content
    .split("\n")
    .map((line) => {
      let record: { type?: string; message?: Record<string, unknown> };
      try {
        record = JSON.parse(line);
      } catch {
        return line;
      }
      const message = record.message;
      if (record.type !== "message" || !message) return line;
      if (typeof message.content === "string") message.content = "";
      if (Array.isArray(message.content)) {
        for (const block of message.content as Record<string, unknown>[]) {
          if (block.type === "text") block.text = "";
          if (block.type === "thinking") block.thinking = "";
        }
      }
      if (message.role === "bashExecution") {
        message.command = "";
        message.output = "";
      }
      return JSON.stringify(record);
    })
    .join("\n");
}

const formsPattern = (word: string) => new RegExp(`(?<![A-Za-z0-9_])(?:${wordForms(word).join("|")})(?![A-Za-z0-9_])`, "i");
const formArgs = (word: string) => wordForms(word).flatMap((form) => ["-e", form]);

describe("search: the corpus against grep -F -w -i", () => {
  let root: string;
  let storage: StoragePort;
  const words: string[] = [];
  const runs = new Set<string>();
  /** Every corpus file as it is, and with its message text blanked. */
  const contents: string[] = [];
  const structures: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "sk-search-corpus-"));
    const found = new Set<string>();
    for (const dir of await readdir(CORPUS_DIR, { withFileTypes: true })) {
      if (!dir.isDirectory()) continue;
      await mkdir(join(root, "sessions", dir.name), { recursive: true });
      for (const name of await readdir(join(CORPUS_DIR, dir.name))) {
        if (!name.endsWith(".jsonl")) continue;
        const content = await readFile(join(CORPUS_DIR, dir.name, name), "utf8");
        await writeFile(join(root, "sessions", dir.name, name), content);
        contents.push(content);
        structures.push(structureOnly(content));
        for (const word of content.match(/(?<=[" ])[A-Za-z]{4,12}(?=[ ,.])/g) ?? []) found.add(word.toLowerCase());
        for (const run of content.match(UNSPACED_RUN) ?? []) runs.add(run);
      }
    }
    storage = nodeFsStorage({ root });
    // Words spread over the alphabet; kept when grep -w can see every place one of the word's forms
    // is a word: never in the JSON around the text, never right after an escape (\n, \t, \r: grep
    // reads "\nword" as the word "nword"), never touching a CJK character (grep -w reads "jsの"
    // as one word; search, as the word js and a run).
    // (Tested here on the files' text, as grep -w -i reads words: letters, digits and _.)
    const sorted = [...found].sort();
    const cjk = String.raw`[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]`;
    for (let i = 0; i < sorted.length && words.length < 60; i += Math.max(1, Math.floor(sorted.length / 600))) {
      const word = sorted[i]!;
      const forms = wordForms(word).join("|");
      const asWord = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${forms})(?![\\p{L}\\p{N}_])`, "iu");
      if (structures.some((text) => asWord.test(text))) continue;
      const touching = new RegExp(`\\\\[ntr](?:${forms})|${cjk}(?:${forms})|(?:${forms})${cjk}`, "iu");
      if (contents.some((text) => touching.test(text))) continue;
      words.push(word);
    }
  });
  afterAll(async () => {
    await storage.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("every source searched: exactly the sessions grep -F -w -i finds for a word's forms, for words of message text; quoted, for the word", async () => {
    expect(words.length).toBeGreaterThanOrEqual(30);
    let widened = 0;
    for (const word of words) {
      const hits = await searchSessions(storage, word, { sources: ALL, limit: Infinity });
      const expected = await grep(root, ["-F", "-w", "-i", ...formArgs(word)]);
      expect(sessionsOf(hits), word).toEqual(expected);
      for (const hit of hits) expect(hit.snippet, `${word} in ${hit.path} ${hit.entryId}`).toMatch(formsPattern(word));
      const exact = await grep(root, ["-F", "-w", "-i", word]);
      expect(sessionsOf(await searchSessions(storage, `"${word}"`, { sources: ALL, limit: Infinity })), `"${word}"`).toEqual(exact);
      if (expected.size > exact.size) widened++;
    }
    expect(widened).toBeGreaterThan(0);
  });

  it("Japanese and Chinese: substrings of the runs of message text, exactly the sessions grep -F finds", async () => {
    const rng = mulberry32(9);
    const pool = [...runs];
    expect(pool.length).toBeGreaterThan(500);
    const tried = new Set<string>();
    let checked = 0;
    while (checked < 40 && tried.size < 4000) {
      const chars = Array.from(rng.pick(pool));
      const length = Math.min(chars.length, 1 + rng.int(5));
      const at = rng.int(chars.length - length + 1);
      const query = chars.slice(at, at + length).join("");
      if (tried.has(query)) continue;
      tried.add(query);
      // Only where grep sees nothing but message text: never in the JSON around it.
      if (structures.some((text) => text.includes(query))) continue;
      const hits = await searchSessions(storage, query, { sources: ALL, limit: Infinity });
      expect(sessionsOf(hits), query).toEqual(await grep(root, ["-F", query]));
      for (const hit of hits) expect(hit.snippet, query).toContain(query);
      checked++;
    }
    expect(checked).toBe(40);
  });

  it("hits point at entries that hold the word; by default only user and assistant text", async () => {
    for (const word of words.slice(0, 20)) {
      const pattern = formsPattern(word);
      const all = await searchSessions(storage, word, { sources: ALL, limit: Infinity });
      const byDefault = await searchSessions(storage, word, { limit: Infinity });
      expect(byDefault.every((hit) => hit.source === "user" || hit.source === "assistant")).toBe(true);
      expect(all.filter((hit) => hit.source === "user" || hit.source === "assistant").map((hit) => `${hit.path} ${hit.entryId}`).sort()).toEqual(
        byDefault.map((hit) => `${hit.path} ${hit.entryId}`).sort(),
      );
      for (const hit of all) {
        if (hit.entryId === null) {
          // A v1 file: its entries have no ids yet; the snippet shows the word.
          expect(hit.snippet).toMatch(pattern);
          continue;
        }
        const content = await readFile(join(root, hit.path), "utf8");
        const line = content.split("\n").find((l) => l.includes(`"id":"${hit.entryId}"`));
        expect(line, `${hit.path} ${hit.entryId}`).toBeDefined();
        expect(line!).toMatch(pattern);
      }
    }
  });
});

// ============================================================================
// The index
// ============================================================================

/** Counts the bytes read from session files (not the index). */
function countingPort(inner: StoragePort): StoragePort & { sessionBytes: number } {
  const port = Object.create(inner) as StoragePort & { sessionBytes: number };
  port.sessionBytes = 0;
  port.read = async (path, range) => {
    const bytes = await inner.read(path, range);
    if (bytes && path.startsWith("sessions/")) port.sessionBytes += bytes.length;
    return bytes;
  };
  return port;
}

describe("search: the index", () => {
  let store: Generated;
  beforeAll(async () => {
    store = await generateStore(0xdecade);
  });
  afterAll(async () => {
    await rm(store.root, { recursive: true, force: true });
  });

  it("a search after appends reads only the appended bytes; a rewrite and a removal are seen", async () => {
    const storage = nodeFsStorage({ root: store.root });
    let progress: SearchIndexProgress | undefined;
    let first: SearchIndexProgress | undefined;
    await searchSessions(storage, "anything", { onProgress: (p) => ((first ??= p), (progress = p)) });
    // The work is told before the first file is read, then as each is done.
    expect(first).toEqual({ filesDone: 0, filesTotal: 15, bytesDone: 0, bytesTotal: progress!.bytesTotal });
    expect(progress!.filesDone).toBe(15);
    expect(progress!.bytesDone).toBe(progress!.bytesTotal);

    const quiet = countingPort(storage);
    progress = undefined;
    await searchSessions(quiet, store.vocab.text[0]!, { onProgress: (p) => (progress = p) });
    expect(progress).toBeUndefined();
    expect(quiet.sessionBytes).toBeLessThan(100_000); // the hits' lines only

    const paths = [...store.texts.keys()].slice(0, 3);
    let appended = 0;
    for (const [i, path] of paths.entries()) {
      const before = (await storage.stat(path))!.size;
      const sm = await SessionManager.open(storage, path);
      sm.appendMessage({ role: "user", content: `zqnewword${i} and zqcommonnew`, timestamp: Date.now() });
      await sm.close();
      appended += (await storage.stat(path))!.size - before;
    }
    const counted = countingPort(storage);
    const hits = await searchSessions(counted, "zqcommonnew", { onProgress: (p) => (progress = p) });
    expect(sessionsOf(hits)).toEqual(new Set(paths));
    expect(progress).toMatchObject({ filesDone: 3, filesTotal: 3, bytesDone: appended, bytesTotal: appended });
    expect((await searchSessions(storage, "zqnewword1")).map((hit) => hit.path)).toEqual([paths[1]]);

    // A rewrite: same header, other text; the old words are gone from it.
    const [victim] = paths;
    const oldWord = store.vocab.text.find((word) => store.texts.get(victim!)!.user.some((text) => text.includes(word)))!;
    const header = (await readFile(join(store.root, victim!), "utf8")).split("\n")[0]!;
    const entry = { type: "message", id: "aaaa0001", parentId: null, timestamp: new Date().toISOString(), message: { role: "user", content: "zqrewritten text", timestamp: 1 } };
    await storage.write(victim!, new TextEncoder().encode(`${header}\n${JSON.stringify(entry)}\n`));
    expect((await searchSessions(storage, "zqrewritten")).map((hit) => hit.entryId)).toEqual(["aaaa0001"]);
    expect(sessionsOf(await searchSessions(storage, oldWord, { limit: Infinity })).has(victim!)).toBe(false);

    await storage.remove(paths[1]!);
    expect(await searchSessions(storage, "zqnewword1")).toEqual([]);
    await storage.close?.();
  });

  it("a store that refuses writes and a damaged index give the same results", async () => {
    const storage = nodeFsStorage({ root: store.root });
    const word = store.vocab.text[2]!;
    const expected = await searchSessions(storage, word, { limit: Infinity });
    expect(expected.length).toBeGreaterThan(0);

    await rm(join(store.root, SEARCH_DIR), { recursive: true, force: true });
    const readOnly = Object.create(storage) as StoragePort;
    readOnly.write = async (path) => {
      throw new StorageError("io", `${path}: read-only store`);
    };
    readOnly.append = readOnly.write;
    expect(await searchSessions(readOnly, word, { limit: Infinity })).toEqual(expected);
    // Nothing could be saved, but the index kept open in this process serves the next search.
    let reread = false;
    expect(await searchSessions(readOnly, word, { limit: Infinity, onProgress: () => (reread = true) })).toEqual(expected);
    expect(reread).toBe(false);
    await expect(readdir(join(store.root, SEARCH_DIR))).rejects.toThrow();

    await mkdir(join(store.root, SEARCH_DIR), { recursive: true });
    await writeFile(join(store.root, SEARCH_DIR, "text.sqlite"), "SQLite format 3\0 but not really a database".repeat(200));
    expect(await searchSessions(storage, word, { limit: Infinity })).toEqual(expected);
    expect(await searchSessions(storage, word, { limit: Infinity })).toEqual(expected);
    await storage.close?.();
  });

  it("searches at once on one port, and another port updating the index file meanwhile, agree with one by one", async () => {
    const storage = nodeFsStorage({ root: store.root });
    const other = nodeFsStorage({ root: store.root });
    const words = store.vocab.text.slice(0, 12);
    const oneByOne: SearchHit[][] = [];
    for (const word of words) oneByOne.push(await searchSessions(storage, word, { limit: Infinity }));
    expect(await Promise.all(words.map((word) => searchSessions(storage, word, { limit: Infinity })))).toEqual(oneByOne);
    // The other port appends and updates the index file; the first sees the new entry.
    const path = [...store.texts.keys()][4]!;
    const sm = await SessionManager.open(other, path);
    sm.appendMessage({ role: "user", content: "zqfromanother port", timestamp: Date.now() });
    await sm.close();
    expect((await searchSessions(other, "zqfromanother")).map((hit) => hit.path)).toEqual([path]);
    expect((await searchSessions(storage, "zqfromanother")).map((hit) => hit.path)).toEqual([path]);
    await storage.close?.();
    await other.close?.();
  });

  it("a flat seed-003 store: its records decoded, sessions of one cwd by the header's cwd", async () => {
    const root = await mkdtemp(join(tmpdir(), "sk-search-seed003-"));
    const storage = nodeFsStorage({ root });
    const made: { path: string; cwd: string; entryId: string }[] = [];
    for (const cwd of ["/work/a", "/work/a/", "/work/b"]) {
      const sm = await SessionManager.create(storage, cwd, { layout: "seed003" });
      const entryId = sm.appendMessage({ role: "user", content: `zqoperator question from ${cwd}`, timestamp: Date.now() });
      sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "zqoperator answer" }], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() });
      await sm.flush();
      made.push({ path: sm.getSessionFile()!, cwd, entryId });
      await sm.close();
    }
    expect(made.every((session) => session.path.startsWith("sessions/") && session.path.split("/").length === 2)).toBe(true);
    expect((await readFile(join(root, made[0]!.path), "utf8")).split("\n")[0]).toContain('"session_header"');
    const all = await searchSessions(storage, "zqoperator question", { limit: Infinity });
    expect(all.map((hit) => [hit.path, hit.entryId, hit.role]).sort()).toEqual(made.map((session) => [session.path, session.entryId, "user"]).sort());
    const inA = await searchSessions(storage, "zqoperator", { dir: "sessions", cwd: "/work/a", limit: Infinity });
    expect(sessionsOf(inA)).toEqual(new Set([made[0]!.path, made[1]!.path]));
    await storage.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("--cwd: only the sessions of one directory", async () => {
    const storage = nodeFsStorage({ root: store.root });
    const word = store.vocab.text[3]!;
    const all = await searchSessions(storage, word, { limit: Infinity });
    const dir = all[0]!.path.slice(0, all[0]!.path.lastIndexOf("/"));
    const inDir = await searchSessions(storage, word, { dir, limit: Infinity });
    expect(sessionsOf(inDir)).toEqual(new Set([...sessionsOf(all)].filter((path) => path.startsWith(`${dir}/`))));
    await storage.close?.();
  });
});
