/**
 * The query language: words (all must match), "quoted phrases", and a trailing * for a prefix
 * (`stor*`, `"session stor"*`). A word is a run of letters, digits and underscores (the index's
 * tokenizer, as grep -w sees words); other characters separate words, so `git-commit` is the
 * phrase "git commit". The FTS5 expression is built from tokens only, always quoted: a query can
 * never be read as FTS5 syntax.
 */

export interface QueryUnit {
  tokens: string[];
  prefix: boolean;
}

export interface ParsedQuery {
  units: QueryUnit[];
  /** The FTS5 MATCH expression; "" when the query has no word. */
  match: string;
}

/** FTS5's unicode61 token characters (categories L*, N*, Co) plus "_" (tokenchars). */
const TOKEN_CHAR = String.raw`[\p{L}\p{N}\p{Co}_]`;
const TOKEN = new RegExp(`${TOKEN_CHAR}+`, "gu");

function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function parseQuery(query: string): ParsedQuery {
  const units: QueryUnit[] = [];
  // "phrase"[*] | word[*]
  for (const match of query.matchAll(/"([^"]*)"(\*?)|([^\s"]+)/g)) {
    const raw = match[1] ?? match[3] ?? "";
    const prefix = match[2] === "*" || (match[3] !== undefined && raw.endsWith("*"));
    const tokens = tokenize(raw);
    if (tokens.length > 0) units.push({ tokens, prefix });
  }
  const match = units.map((unit) => `"${unit.tokens.join(" ")}"${unit.prefix ? "*" : ""}`).join(" AND ");
  return { units, match };
}

const SEPARATOR = String.raw`[^\p{L}\p{N}\p{Co}_]+`;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A case-insensitive pattern finding a unit in text, on token boundaries as the index has them. */
export function unitPattern(unit: QueryUnit): RegExp {
  const body = unit.tokens.map(escapeRegExp).join(SEPARATOR);
  return new RegExp(`(?<!${TOKEN_CHAR})${body}${unit.prefix ? "" : `(?!${TOKEN_CHAR})`}`, "iu");
}

/** Up to `width` characters of `text` around the first match of any unit, on one line. */
export function snippetOf(text: string, units: readonly QueryUnit[], width = 160): string {
  let at = -1;
  let length = 0;
  for (const unit of units) {
    const found = unitPattern(unit).exec(text);
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
  return `${start > 0 ? "…" : ""}${flat}${end < text.length ? "…" : ""}`;
}
