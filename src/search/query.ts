/**
 * The query language: words (all must match), "quoted phrases" and a trailing * for a prefix,
 * split into tokens as the index splits text (words.ts), so `git-commit` is the phrase "git commit".
 * The FTS5 expression is built from tokens only, always quoted: a query can never be read as FTS5
 * syntax. It finds a superset of the entries; `unitPattern` is the exact test on their text. What
 * each token matches: docs/api.md ("Search") and docs/DESIGN.md §8.
 */
import { isUnspacedRun, runExpression, UNSPACED_CHAR, WORD_CHAR, wordForms } from "./words.js";

export interface QueryUnit {
  /** Spaced words and unspaced runs, in order. */
  tokens: string[];
  prefix: boolean;
  /** A bare word's forms (words.ts: `wordForms`); null when the words match as written (quoted, a prefix, a phrase, a run). */
  forms: string[] | null;
}

export interface ParsedQuery {
  units: QueryUnit[];
}

const TOKEN = new RegExp(`${WORD_CHAR}+|${UNSPACED_CHAR}+`, "gu");

/** Spaced words and unspaced runs of `text` (a run next to a word is a token of its own). */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function parseQuery(query: string): ParsedQuery {
  const units: QueryUnit[] = [];
  // "phrase"[*] | word[*]
  for (const match of query.matchAll(/"([^"]*)"(\*?)|([^\s"]+)/g)) {
    const raw = match[1] ?? match[3] ?? "";
    const prefix = match[2] === "*" || (match[3] !== undefined && raw.endsWith("*"));
    const tokens = tokenize(raw);
    if (tokens.length === 0) continue;
    const bare = match[1] === undefined && !prefix && tokens.length === 1 && !isUnspacedRun(tokens[0]!);
    units.push({ tokens, prefix, forms: bare ? wordForms(tokens[0]!) : null });
  }
  return { units };
}

/**
 * The FTS5 MATCH expression of the units ("" for none): each token's term present (a phrase's
 * anywhere in the entry, the index has no positions); a bare word's forms as alternatives, those
 * `indexed` says the index holds (most of the forms are in no text, and each alternative costs
 * bm25 a phrase per row), or the word itself when it holds none.
 */
export function matchExpression(units: readonly QueryUnit[], indexed: (term: string) => boolean = () => true): string {
  return units
    .map((unit) => {
      const forms = unit.forms;
      if (forms) {
        const held = forms.length > 1 ? forms.filter(indexed) : forms;
        return held.length > 1 ? `(${held.map((form) => `"${form}"`).join(" OR ")})` : `"${held[0] ?? forms[0]}"`;
      }
      return unit.tokens
        .map((token, i) => (isUnspacedRun(token) ? runExpression(token) : `"${token}"${unit.prefix && i === unit.tokens.length - 1 ? "*" : ""}`))
        .join(" AND ");
    })
    .join(" AND ");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const NON_TOKEN = String.raw`[^\p{L}\p{N}\p{Co}_]`;

/**
 * A case-insensitive pattern finding a unit in text, as the query means it: a spaced word between
 * spaced-word boundaries (a CJK character is one), a run anywhere; tokens of a phrase separated by
 * anything but token characters (nothing, too, where a run meets a token).
 */
export function unitPattern(unit: QueryUnit): RegExp {
  const forms = unit.forms;
  let body = "";
  unit.tokens.forEach((token, i) => {
    const run = isUnspacedRun(token);
    if (i > 0) body += run || isUnspacedRun(unit.tokens[i - 1]!) ? `${NON_TOKEN}*` : `${NON_TOKEN}+`;
    if (run) body += escapeRegExp(token);
    else {
      const open = unit.prefix && i === unit.tokens.length - 1;
      const word = forms ? `(?:${forms.map(escapeRegExp).join("|")})` : escapeRegExp(token);
      body += `(?<!${WORD_CHAR})${word}${open ? "" : `(?!${WORD_CHAR})`}`;
    }
  });
  return new RegExp(body, "iu");
}

/** A hit's text, cut short, and where the query matches in it. */
export interface Snippet {
  text: string;
  /** `[start, end)` in `text` (UTF-16 offsets), in order, none overlapping another. */
  matches: [start: number, end: number][];
}

/**
 * Up to `width` characters of `text` around the first match of any pattern (`unitPattern`), on one
 * line, with every match of the patterns in it.
 */
export function snippetOf(text: string, patterns: readonly RegExp[], width = 160): Snippet {
  let at = -1;
  let length = 0;
  for (const pattern of patterns) {
    const found = pattern.exec(text);
    if (found && (at < 0 || found.index < at)) {
      at = found.index;
      length = found[0].length;
    }
  }
  if (at < 0) at = 0;
  const before = Math.floor((width - Math.min(length, width)) / 3);
  const start = Math.max(0, at - before);
  const end = Math.min(text.length, start + width);
  const flat = text.slice(start, end).replace(/\s+/g, " ").trim();
  const snippet = `${start > 0 ? "…" : ""}${flat}${end < text.length ? "…" : ""}`;
  return { text: snippet, matches: matchesIn(snippet, patterns) };
}

/** Every match of any of `patterns` in `text`, in order, overlapping ones merged. */
function matchesIn(text: string, patterns: readonly RegExp[]): [number, number][] {
  const found: [number, number][] = [];
  for (const pattern of patterns) {
    for (const match of text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`))) {
      if (match[0].length > 0) found.push([match.index, match.index + match[0].length]);
    }
  }
  found.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of found) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}
