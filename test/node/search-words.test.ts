/**
 * words.ts on its own: the stems of Porter's examples, word forms undone from a stem finding every
 * word of that stem (the corpus's words, and made-up words with every ending the steps strip), and
 * runs of Chinese, Japanese and Korean given to the index as bigrams.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { matchExpression, parseQuery, tokenize, unitPattern } from "../../src/search/query.js";
import { indexedText, inflectionStem, runExpression, runTerms, wordForms } from "../../src/search/words.js";
import { CORPUS_DIR } from "../shared/corpus.js";
import { mulberry32 } from "../shared/prng.js";

/** Every run of three or more letters a-z (lowercased) in the corpus files. */
async function corpusWords(): Promise<string[]> {
  const words = new Set<string>();
  for (const dir of await readdir(CORPUS_DIR, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of await readdir(join(CORPUS_DIR, dir.name))) {
      const text = (await readFile(join(CORPUS_DIR, dir.name, name), "utf8")).toLowerCase();
      for (const word of text.match(/[a-z]{3,}/g) ?? []) words.add(word);
    }
  }
  return [...words];
}

function byStem(words: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const word of words) {
    const stem = inflectionStem(word);
    const group = groups.get(stem);
    if (group) group.push(word);
    else groups.set(stem, [word]);
  }
  return groups;
}

describe("word forms", () => {
  it("stems as Porter's steps 1a-1c and 5 have his examples", () => {
    const examples: Record<string, string> = {
      caresses: "caress", ponies: "poni", ties: "ti", caress: "caress", cats: "cat",
      feed: "feed", plastered: "plaster", bled: "bled", motoring: "motor", sing: "sing",
      hopping: "hop", tanned: "tan", falling: "fall", hissing: "hiss", fizzed: "fizz", failing: "fail", filing: "file", sized: "size",
      conflated: "conflat", troubled: "troubl", happy: "happi", sky: "sky",
      probate: "probat", rate: "rate", cease: "ceas", controlling: "control", roll: "roll",
    };
    for (const [word, stem] of Object.entries(examples)) expect(inflectionStem(word), word).toBe(stem);
  });

  it("plurals, -ed, -ing, y and e meet; derivations and short words do not", () => {
    const meet = [
      ["redirect", "redirects", "redirected", "redirecting"],
      ["policy", "policies"],
      ["apply", "applies", "applied", "applying"],
      ["change", "changes", "changed", "changing"],
      ["control", "controls", "controlled", "controlling"],
      ["hope", "hopes", "hoped", "hoping"],
      ["run", "runs", "running"],
      ["use", "uses", "used", "using"],
    ];
    for (const group of meet) {
      for (const word of group) expect(new Set(wordForms(word)), word).toEqual(new Set(wordForms(group[0]!)));
      for (const word of group) expect(wordForms(group[0]!)).toContain(word);
    }
    const apart = [["redirect", "redirection"], ["hop", "hope"], ["plan", "plane"], ["use", "us"], ["session", "sessionkit"]];
    for (const [a, b] of apart) expect(wordForms(a!), `${a} / ${b}`).not.toContain(b);
    expect(wordForms("us")).toEqual(["us"]);
    expect(wordForms("Redirects")).toContain("redirect");
    expect(wordForms("v2")).toEqual(["v2"]);
    expect(wordForms("naïve")).toEqual(["naïve"]);
  });

  it("a word's forms are every word of the corpus with its stem, and only such words", async () => {
    const words = await corpusWords();
    expect(words.length).toBeGreaterThan(5000);
    const groups = byStem(words);
    let shared = 0;
    const wrong: string[] = [];
    for (const word of words) {
      const stem = inflectionStem(word);
      const forms = new Set(wordForms(word));
      for (const other of groups.get(stem)!) if (!forms.has(other)) wrong.push(`${word}: ${other} missing`);
      for (const form of forms) if (inflectionStem(form) !== stem) wrong.push(`${word}: ${form} has another stem`);
      if (groups.get(stem)!.length > 1) shared++;
    }
    expect(wrong).toEqual([]);
    expect(shared).toBeGreaterThan(1000);
  });

  it("made-up words with every ending the steps strip: their forms find each other", () => {
    const rng = mulberry32(11);
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const endings = ["", "s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "y", "e", "ll", "at", "bl", "iz", "ated", "bling", "izing", "ying", "ied", "lled", "lling"];
    const words = new Set<string>();
    while (words.size < 20_000) {
      let root = "";
      for (let i = 0, n = 1 + rng.int(5); i < n; i++) root += letters[rng.int(26)];
      const word = root + rng.pick(endings) + (rng.chance(0.3) ? rng.pick(["s", "ed", "ing", "e"]) : "");
      if (word.length >= 3) words.add(word);
    }
    let shared = 0;
    const missing: string[] = [];
    for (const group of byStem([...words]).values()) {
      if (group.length < 2) continue;
      shared++;
      for (const word of group) {
        const forms = new Set(wordForms(word));
        for (const other of group) if (!forms.has(other)) missing.push(`${word}: ${other}`);
      }
    }
    expect(missing).toEqual([]);
    expect(shared).toBeGreaterThan(500);
  });
});

describe("Chinese, Japanese and Korean runs", () => {
  it("the index holds a run's bigrams and its last character; a run next to a word parts from it", () => {
    expect(runTerms("画像は")).toEqual(["画像", "像は", "は"]);
    expect(runTerms("画")).toEqual(["画"]);
    expect(runTerms("𠮷野家")).toEqual(["𠮷野", "野家", "家"]); // code points, not UTF-16 units
    expect(indexedText("（ちなみに画像は認識できないので…")).toBe("（ ちな なみ みに に画 画像 像は は認 認識 識で でき きな ない いの ので で …");
    expect(indexedText("Node.jsの画像、이미지를")).toBe("Node.js の画 画像 像 、 이미 미지 지를 를 ");
    expect(indexedText("plain text, naïve")).toBe("plain text, naïve");
  });

  it("every letter or digit of Han, Hiragana, Katakana or Hangul is given to the index as a run", () => {
    const unspaced = /(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u;
    let count = 0;
    const missed: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (!unspaced.test(char)) continue;
      count++;
      if (indexedText(`a${char}b`) !== `a ${char} b`) missed.push(code.toString(16));
    }
    expect(missed).toEqual([]);
    expect(count).toBeGreaterThan(90_000);
  });

  it("a query's run asks for every bigram, one character for any term it starts", () => {
    expect(runExpression("画像")).toBe('"画像"');
    expect(runExpression("画像認識")).toBe('"画像" AND "像認" AND "認識"');
    expect(runExpression("ああああ")).toBe('"ああ"');
    expect(runExpression("画")).toBe('"画"*');
    expect(tokenize("jsの画像 2個")).toEqual(["js", "の画像", "2", "個"]);
    const units = parseQuery("画像 redirects").units;
    expect(matchExpression(units)).toBe(`"画像" AND (${wordForms("redirects").map((f) => `"${f}"`).join(" OR ")})`);
    expect(matchExpression(units, (term) => term === "redirect" || term === "redirects")).toBe('"画像" AND ("redirects" OR "redirect")');
    expect(matchExpression(units, (term) => term === "redirect")).toBe('"画像" AND "redirect"');
    expect(matchExpression(units, () => false)).toBe('"画像" AND "redirects"');
  });

  it("a run matches anywhere in a run; a word next to a run is a word", () => {
    const matches = (query: string, text: string) => parseQuery(query).units.every((unit) => unitPattern(unit).test(text));
    expect(matches("画像", "（ちなみに画像は認識できないので…")).toBe(true);
    expect(matches("像は認", "（ちなみに画像は認識できないので…")).toBe(true);
    expect(matches("画 像", "画像")).toBe(true);
    expect(matches('"画像 認識"', "画像、認識")).toBe(true);
    expect(matches('"画像 認識"', "画像の認識")).toBe(false);
    expect(matches("js", "Node.jsの画像")).toBe(true);
    expect(matches('"js の画像"', "Node.jsの画像")).toBe(true);
    expect(matches("json", "Node.jsの画像")).toBe(false);
    expect(matches("이미지", "이미지를 인식할 수 없으므로")).toBe(true);
    expect(matches("redirects", "a Redirect loop")).toBe(true);
    expect(matches('"redirects"', "a Redirect loop")).toBe(false);
    expect(matches("redirect", "the redirection")).toBe(false);
  });
});
