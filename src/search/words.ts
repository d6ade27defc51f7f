/**
 * What the index and the query agree a word is, beyond FTS5's unicode61 tokenizer: a run of
 * Chinese, Japanese or Korean characters is indexed as its bigrams and its last character, and a
 * bare English query word asks for its written forms under Porter's steps 1 and 5 (`wordForms`),
 * so the index keeps words as written. Why bigrams, and which forms: docs/DESIGN.md §8.
 */

/** FTS5's unicode61 token characters (categories L*, N*, Co) plus "_" (tokenchars). */
const TOKEN_CHAR = String.raw`[\p{L}\p{N}\p{Co}_]`;
const UNSPACED_SCRIPT = String.raw`[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]`;
/** A token character of an unspaced script (script punctuation such as 、 and 。 is not one). */
export const UNSPACED_CHAR = String.raw`(?:(?=[\p{L}\p{N}])${UNSPACED_SCRIPT})`;
/** A token character of a spaced word: any other letter, digit, private-use character or "_". */
export const WORD_CHAR = String.raw`(?:(?!${UNSPACED_SCRIPT})${TOKEN_CHAR})`;

const UNSPACED_RUN = new RegExp(`${UNSPACED_CHAR}+`, "gu");
const UNSPACED_ONLY = new RegExp(`^${UNSPACED_CHAR}+$`, "u");
/**
 * Blocks holding every UNSPACED_CHAR (Hangul Jamo, CJK and Kana to Hangul syllables, compatibility
 * ideographs, half- and fullwidth forms, and the high surrogates of Kana supplements and the
 * ideograph planes; test/node/search-words.test.ts checks each code point): a cheap test that
 * spares most text the property classes, which would otherwise be run over every character
 * indexed (no bench row isolates it; `npm run bench` row `search.coldIndex` includes it).
 */
const MAYBE_UNSPACED = /[\u1100-\u11ff\u2e80-\ud7ff\uf900-\ufaff\uff00-\uffef\ud81b-\ud8bf]/;
/** Stretches of those blocks (low surrogates too, so a pair stays whole): where runs can be. */
const MAYBE_UNSPACED_STRETCH = /[\u1100-\u11ff\u2e80-\ud7ff\uf900-\ufaff\uff00-\uffef\ud81b-\ud8bf\udc00-\udfff]+/g;

/** Whether a token (of `tokenize` in query.ts) is a run of unspaced characters. */
export function isUnspacedRun(token: string): boolean {
  return UNSPACED_ONLY.test(token);
}

/** The terms the index holds for a run: its bigrams and its last character, in code points. */
export function runTerms(run: string): string[] {
  const chars = Array.from(run);
  const terms: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) terms.push(chars[i]! + chars[i + 1]!);
  terms.push(chars[chars.length - 1]!);
  return terms;
}

/**
 * The text as the index's tokenizer is given it: each unspaced run replaced by its terms between
 * spaces (which also parts it from a spaced word it touches); text without one is left as it is.
 */
export function indexedText(text: string): string {
  if (!MAYBE_UNSPACED.test(text)) return text;
  return text.replace(MAYBE_UNSPACED_STRETCH, (stretch) => stretch.replace(UNSPACED_RUN, (run) => ` ${runTerms(run).join(" ")} `));
}

/**
 * The FTS5 expression for a query's run: every bigram of it, or for one character every term
 * starting with it (a bigram, or a run's last character).
 */
export function runExpression(run: string): string {
  const chars = Array.from(run);
  if (chars.length === 1) return `"${run}"*`;
  const bigrams = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) bigrams.add(chars[i]! + chars[i + 1]!);
  return [...bigrams].map((bigram) => `"${bigram}"`).join(" AND ");
}

// ---------------------------------------------------------------------------------------------
// Word forms: Porter's steps 1a-1c and 5 (M. F. Porter, "An algorithm for suffix stripping", 1980,
// as in his reference implementation). Step 1 strips the inflections; step 5 drops a final e and
// undoubles a final ll, so that the forms step 1 leaves meet (change/changed, control/controlling).
// Steps 2-4, the derivations (-ation, -ness, -ful ...), are left out.
// ---------------------------------------------------------------------------------------------

const ENGLISH_WORD = /^[a-z]{3,}$/;

/** Whether `word[i]` is a consonant in Porter's sense (y after a consonant is a vowel). */
function isConsonant(word: string, i: number): boolean {
  switch (word[i]) {
    case "a":
    case "e":
    case "i":
    case "o":
    case "u":
      return false;
    case "y":
      return i === 0 || !isConsonant(word, i - 1);
    default:
      return true;
  }
}

/** m: the number of vowel-consonant sequences of `stem`, [C](VC)^m[V]. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  while (i < stem.length && isConsonant(stem, i)) i++;
  while (i < stem.length) {
    while (i < stem.length && !isConsonant(stem, i)) i++;
    if (i >= stem.length) break;
    m++;
    while (i < stem.length && isConsonant(stem, i)) i++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

/** *d: ends with a double consonant. */
function endsDouble(stem: string): boolean {
  const n = stem.length;
  return n >= 2 && stem[n - 1] === stem[n - 2] && isConsonant(stem, n - 1);
}

/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(stem: string): boolean {
  const n = stem.length;
  if (n < 3 || !isConsonant(stem, n - 1) || isConsonant(stem, n - 2) || !isConsonant(stem, n - 3)) return false;
  const last = stem[n - 1];
  return last !== "w" && last !== "x" && last !== "y";
}

/**
 * The stem of a lowercase word of three or more letters a-z under Porter's steps 1a-1c and 5
 * (shorter words are not stemmed: they match only themselves).
 */
export function inflectionStem(word: string): string {
  let w = word;
  // 1a: plurals
  if (w.endsWith("sses") || w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);
  // 1b: -eed, -ed, -ing
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else {
    const suffix = w.endsWith("ed") ? 2 : w.endsWith("ing") ? 3 : 0;
    if (suffix > 0 && hasVowel(w.slice(0, -suffix))) {
      w = w.slice(0, -suffix);
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (endsDouble(w)) {
        if (!"lsz".includes(w[w.length - 1]!)) w = w.slice(0, -1);
      } else if (measure(w) === 1 && endsCvc(w)) w += "e";
    }
  }
  // 1c: a final y after a stem holding a vowel
  if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + "i";
  // 5a: a final e, unless the word is short and ends consonant-vowel-consonant before it
  if (w.endsWith("e")) {
    const m = measure(w.slice(0, -1));
    if (m > 1 || (m === 1 && !endsCvc(w.slice(0, -1)))) w = w.slice(0, -1);
  }
  // 5b: ll after a longer stem
  if (w.endsWith("ll") && measure(w) > 1) w = w.slice(0, -1);
  return w;
}

/**
 * The words a bare query word matches: every word of three or more letters a-z with its stem
 * (itself included), lowercase; a shorter word or one with other characters matches only itself.
 * Built by undoing each step in every way it can have been taken, each candidate kept when its
 * stem is the word's (test/node/search-words.test.ts checks this finds every such word of the
 * corpus).
 */
export function wordForms(word: string): string[] {
  const lower = word.toLowerCase();
  // As typed: FTS5 folds its case as it folds the index's.
  if (!ENGLISH_WORD.test(lower)) return [word];
  const stem = inflectionStem(lower);
  const forms = new Set<string>([lower]);
  const tried = new Set<string>(forms);
  const last = (text: string) => text[text.length - 1]!;
  for (const y of stem.endsWith("l") ? [stem, stem + "l"] : [stem]) {
    for (const x of [y, y + "e"]) {
      for (const u of x.endsWith("i") ? [x, x.slice(0, -1) + "y"] : [x]) {
        // before 1b: -eed lost its d; -ed or -ing went, then an e was added or a consonant undoubled
        const before1b = [u];
        if (u.endsWith("ee")) before1b.push(u + "d");
        const roots = [u, u + last(u)];
        if (u.endsWith("e")) roots.push(u.slice(0, -1));
        for (const root of roots) before1b.push(root + "ed", root + "ing");
        for (const v of before1b) {
          // before 1a: an s; sses for ss; ies for i
          const candidates = [v, v + "s"];
          if (v.endsWith("ss") || v.endsWith("i")) candidates.push(v + "es");
          for (const form of candidates) {
            if (tried.has(form)) continue;
            tried.add(form);
            if (form.length >= 3 && inflectionStem(form) === stem) forms.add(form);
          }
        }
      }
    }
  }
  return [...forms];
}
