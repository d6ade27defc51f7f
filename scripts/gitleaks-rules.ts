/**
 * Generates src/secrets/gitleaks-rules.ts from gitleaks' default rule set (config/gitleaks.toml,
 * MIT, © Zachary Rice): each rule's id, keywords, entropy, secret group and allowlists as data,
 * its Go (RE2) regex rewritten for JavaScript.
 *
 *   tsx scripts/gitleaks-rules.ts <gitleaks.toml> <version> <commit> [<cmd/generate/config/rules>]
 *
 * With gitleaks' rule sources (the fourth argument, a folder of Go files), the literal true and
 * false positives each rule is validated with there are written to
 * test/fixtures/gitleaks-samples.json: test/node/secrets.test.ts runs each rule on them.
 *
 * JavaScript (Node 20, the browsers sessionkit supports) has no inline flags: `(?i)`, `(?i:…)`,
 * `(?-i:…)` and `(?s:…)` are rewritten as what they mean (a letter under `i` becomes `[aA]`, a
 * class gets its other-case ranges, `.` under `s` becomes `[\s\S]`), `(?P<name>` becomes
 * `(?<name>`, `[[:alnum:]]` its ranges, `\z` `$`. Rules that apply to file paths only (gitleaks'
 * `path`) are left out: a session has no files. Every rewritten regex is compiled here.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";

type TomlValue = string | number | boolean | TomlValue[];
type Table = Record<string, TomlValue>;

/**
 * The subset of TOML gitleaks.toml is written in: `[table]`, `[[array.of.tables]]`, `key = value`
 * with '''literal''' or "basic" strings, numbers, booleans and (multi-line) arrays of them.
 * Anything else throws.
 */
function parseToml(text: string): { root: Table; tables: Map<string, Table>; arrays: Map<string, Table[]> } {
  const root: Table = {};
  const tables = new Map<string, Table>();
  const arrays = new Map<string, Table[]>();
  /** The table of each `[[rules]]`, for its `[[rules.allowlists]]`. */
  let current = root;
  let lastRule: Table | undefined;
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`gitleaks.toml at offset ${i}: ${what}`);
  };
  const skipSpace = () => {
    for (;;) {
      while (i < text.length && /[ \t\r\n]/.test(text[i]!)) i++;
      if (text[i] !== "#") return;
      while (i < text.length && text[i] !== "\n") i++;
    }
  };
  const value = (): TomlValue => {
    skipSpace();
    if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      if (end < 0) fail("unterminated '''");
      const raw = text.slice(i + 3, end);
      i = end + 3;
      return raw;
    }
    if (text[i] === '"') {
      let out = "";
      for (i++; text[i] !== '"'; i++) {
        if (i >= text.length) fail('unterminated "');
        if (text[i] === "\\") {
          const next = text[++i]!;
          const simple: Record<string, string> = { n: "\n", t: "\t", '"': '"', "\\": "\\", r: "\r" };
          if (!(next in simple)) fail(`escape \\${next}`);
          out += simple[next];
        } else {
          out += text[i];
        }
      }
      i++;
      return out;
    }
    if (text[i] === "[") {
      i++;
      const items: TomlValue[] = [];
      for (;;) {
        skipSpace();
        if (text[i] === "]") {
          i++;
          return items;
        }
        items.push(value());
        skipSpace();
        if (text[i] === ",") i++;
        else if (text[i] !== "]") fail("expected , or ]");
      }
    }
    const word = /^(true|false|-?\d+(?:\.\d+)?)/.exec(text.slice(i, i + 32));
    if (!word) fail("unsupported value");
    i += word![0].length;
    return word![1] === "true" ? true : word![1] === "false" ? false : Number(word![1]);
  };
  for (;;) {
    skipSpace();
    if (i >= text.length) break;
    if (text.startsWith("[[", i)) {
      const end = text.indexOf("]]", i);
      const name = text.slice(i + 2, end);
      i = end + 2;
      const table: Table = {};
      if (name === "rules") {
        lastRule = table;
        (arrays.get("rules") ?? arrays.set("rules", []).get("rules")!).push(table);
      } else if (name === "rules.allowlists") {
        if (!lastRule) fail("[[rules.allowlists]] before any [[rules]]");
        ((lastRule!.allowlists as unknown as Table[] | undefined) ?? ((lastRule!.allowlists as unknown as Table[]) = [])).push(table);
      } else {
        fail(`array of tables [[${name}]]`);
      }
      current = table;
    } else if (text[i] === "[") {
      const end = text.indexOf("]", i);
      const name = text.slice(i + 1, end);
      i = end + 1;
      current = {};
      tables.set(name, current);
    } else {
      const key = /^([A-Za-z][A-Za-z0-9_]*)\s*=/.exec(text.slice(i, i + 64));
      if (!key) fail("expected key = value");
      i += key![0].length;
      current[key![1]!] = value();
    }
  }
  return { root, tables, arrays };
}

// ---------------------------------------------------------------------------
// Go RE2 → JavaScript
// ---------------------------------------------------------------------------

const POSIX_CLASSES: Record<string, [number, number][]> = {
  alnum: [range("0", "9"), range("A", "Z"), range("a", "z")],
  alpha: [range("A", "Z"), range("a", "z")],
  digit: [range("0", "9")],
  lower: [range("a", "z")],
  upper: [range("A", "Z")],
  xdigit: [range("0", "9"), range("A", "F"), range("a", "f")],
};

function range(from: string, to: string): [number, number] {
  return [from.charCodeAt(0), to.charCodeAt(0)];
}

const A = 65;
const Z = 90;
const a = 97;
const z = 122;

/** A char code as it may stand in a JavaScript character class. */
function classChar(code: number): string {
  const char = String.fromCharCode(code);
  if ("\\]^-[".includes(char)) return `\\${char}`;
  if (code < 0x20 || code > 0x7e) return `\\x${code.toString(16).padStart(2, "0")}`;
  return char;
}

/** The ranges that `lo`–`hi` adds under case folding (the other case of its letters). */
function otherCase(lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  const lowerLo = Math.max(lo, a);
  const lowerHi = Math.min(hi, z);
  if (lowerLo <= lowerHi) out.push([lowerLo - 32, lowerHi - 32]);
  const upperLo = Math.max(lo, A);
  const upperHi = Math.min(hi, Z);
  if (upperLo <= upperHi) out.push([upperLo + 32, upperHi + 32]);
  return out;
}

interface Flags {
  caseless: boolean;
  dotAll: boolean;
}

/**
 * `pattern` in JavaScript. With `ignoreFlags`, inline flags are dropped (not spelled out): compiled
 * with "i" that is a looser regex, matching wherever the exact one does (see RuleData.loose).
 */
function goRegexToJs(pattern: string, ignoreFlags = false): string {
  let i = 0;
  let out = "";
  let flags: Flags = { caseless: false, dotAll: false };
  const saved: Flags[] = [];
  const fail = (what: string): never => {
    throw new Error(`${what} at ${i} in ${pattern}`);
  };
  /** An escape's char code (\xNN, \t, \n, \r, or a punctuation character), or null for a class escape (\w, \d, \s, ...). */
  const escapeCode = (): { code: number | null; text: string } => {
    const c = pattern[i + 1];
    if (c === undefined) fail("trailing backslash");
    if (c === "x") {
      const hex = /^[0-9a-fA-F]{2}/.exec(pattern.slice(i + 2));
      if (!hex) fail("\\x without two hex digits");
      i += 4;
      return { code: parseInt(hex![0], 16), text: `\\x${hex![0]}` };
    }
    i += 2;
    const controls: Record<string, number> = { t: 9, n: 10, r: 13, f: 12, v: 11 };
    if (c! in controls) return { code: controls[c!]!, text: `\\${c}` };
    if ("dDwWsS".includes(c!)) return { code: null, text: `\\${c}` };
    if (/[A-Za-z0-9]/.test(c!)) fail(`unsupported escape \\${c}`);
    return { code: c!.charCodeAt(0), text: `\\${c}` };
  };
  const parseClass = () => {
    i++; // [
    let negated = false;
    if (pattern[i] === "^") {
      negated = true;
      i++;
    }
    const parts: string[] = [];
    const ranges: [number, number][] = [];
    let first = true;
    const atom = (): { code: number | null; text: string } => {
      if (pattern[i] === "\\") return escapeCode();
      const code = pattern.charCodeAt(i++);
      return { code, text: classChar(code) };
    };
    while (first || pattern[i] !== "]") {
      if (i >= pattern.length) fail("unterminated class");
      first = false;
      const posix = /^\[:([a-z]+):\]/.exec(pattern.slice(i));
      if (posix) {
        const members = POSIX_CLASSES[posix[1]!] ?? fail(`POSIX class ${posix[0]}`);
        for (const [lo, hi] of members) {
          ranges.push([lo, hi]);
          parts.push(`${classChar(lo)}-${classChar(hi)}`);
        }
        i += posix[0].length;
        continue;
      }
      const from = atom();
      if (pattern[i] === "-" && pattern[i + 1] !== "]" && from.code !== null) {
        i++;
        const to = atom();
        if (to.code === null) fail("range to a class escape");
        ranges.push([from.code, to.code!]);
        parts.push(`${classChar(from.code)}-${classChar(to.code!)}`);
      } else {
        if (from.code !== null) ranges.push([from.code, from.code]);
        parts.push(from.code === null ? from.text : classChar(from.code));
      }
    }
    i++; // ]
    if (flags.caseless) for (const [lo, hi] of ranges) for (const [x, y] of otherCase(lo, hi)) parts.push(x === y ? classChar(x) : `${classChar(x)}-${classChar(y)}`);
    out += `[${negated ? "^" : ""}${parts.join("")}]`;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === "z") {
        out += "$";
        i += 2;
      } else if (next === "A") {
        out += "^";
        i += 2;
      } else if (next === "b" || next === "B") {
        out += `\\${next}`;
        i += 2;
      } else {
        const { code, text } = escapeCode();
        out += code !== null && flags.caseless && otherCase(code, code).length > 0 ? `[${classChar(code)}${classChar(otherCase(code, code)[0]![0])}]` : text;
      }
    } else if (c === "[") {
      parseClass();
    } else if (c === "(") {
      const rest = pattern.slice(i);
      const named = /^\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
      const modifier = /^\(\?([is]*)(?:-([is]*))?(:|\))/.exec(rest);
      saved.push(flags);
      if (named) {
        out += `(?<${named[1]}>`;
        i += named[0].length;
      } else if (rest.startsWith("(?:")) {
        out += "(?:";
        i += 3;
      } else if (modifier) {
        const next = { ...flags };
        for (const flag of modifier[1]!) next[flag === "i" ? "caseless" : "dotAll"] = true;
        for (const flag of modifier[2] ?? "") next[flag === "i" ? "caseless" : "dotAll"] = false;
        if (ignoreFlags) next.caseless = false;
        i += modifier[0].length;
        if (modifier[3] === ")") {
          // `(?i)`: to the end of the enclosing group.
          saved.pop();
          flags = next;
        } else {
          out += "(?:";
          flags = next;
        }
      } else if (rest.startsWith("(?")) {
        fail("unsupported group");
      } else {
        out += "(";
        i++;
      }
    } else if (c === ")") {
      flags = saved.pop() ?? fail("unbalanced )");
      out += ")";
      i++;
    } else if (c === ".") {
      out += flags.dotAll ? "[\\s\\S]" : ".";
      i++;
    } else if (/[A-Za-z]/.test(c) && flags.caseless) {
      out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  if (saved.length > 0) fail("unbalanced (");
  return out;
}

// ---------------------------------------------------------------------------
// The data file
// ---------------------------------------------------------------------------

const NAME_PREFIX = "[\\w.-]{0,50}?";

interface Allowlist {
  regexes?: string[];
  regexTarget?: "secret" | "match" | "line";
  stopwords?: string[];
  condition?: "and";
}

function allowlistOf(table: Table, where: string): Allowlist | null {
  const known = new Set(["description", "regexes", "regexTarget", "stopwords", "condition", "paths", "commits"]);
  for (const key of Object.keys(table)) if (!known.has(key)) throw new Error(`${where}: allowlist key ${key}`);
  const and = typeof table.condition === "string" && table.condition.toUpperCase() === "AND";
  // A session has no paths or commits: an AND with them never holds; an OR keeps its other tests.
  if (and && (table.paths || table.commits)) return null;
  const regexes = (table.regexes as string[] | undefined)?.map((source) => goRegexToJs(source));
  const stopwords = (table.stopwords as string[] | undefined)?.map((word) => word.toLowerCase());
  if (!regexes && !stopwords) return null;
  const target = table.regexTarget as Allowlist["regexTarget"] | undefined;
  return { ...(regexes ? { regexes } : {}), ...(target && target !== "secret" ? { regexTarget: target } : {}), ...(stopwords ? { stopwords } : {}), ...(and ? { condition: "and" as const } : {}) };
}

/** A Go string literal's value: "interpreted" (JSON's escapes) or `raw`; null for anything else. */
function goString(literal: string): string | null {
  if (literal.startsWith("`")) return literal.slice(1, -1);
  try {
    return JSON.parse(literal) as string;
  } catch {
    return null; // a Go escape JSON does not have (\x..): left out
  }
}

/**
 * The literal samples of gitleaks' rule sources: in each function, its RuleID and the lines of
 * its `tps` and `fps` slices that are one string literal (generated samples are left out).
 */
function ruleSamples(dir: string): Record<string, { truePositives: string[]; falsePositives: string[] }> {
  const out: Record<string, { truePositives: string[]; falsePositives: string[] }> = {};
  for (const name of readdirSync(dir).filter((entry) => entry.endsWith(".go") && !entry.endsWith("_test.go")).sort()) {
    for (const fn of readFileSync(nodePath.join(dir, name), "utf8").split(/\nfunc /)) {
      const id = /RuleID:\s*"([^"]+)"/.exec(fn)?.[1];
      if (!id) continue;
      const literals = (slice: string) => {
        const body = new RegExp(`\\b${slice}\\s*:?=\\s*\\[\\]string\\{([\\s\\S]*?)\\n\\t\\}`).exec(fn)?.[1] ?? "";
        return [...body.matchAll(/^\s*("(?:[^"\\]|\\.)*"|`[^`]*`),\s*(?:\/\/.*)?$/gm)].map((match) => goString(match[1]!)).filter((value): value is string => value !== null);
      };
      const truePositives = literals("tps");
      const falsePositives = literals("fps");
      if (truePositives.length + falsePositives.length > 0) out[id] = { truePositives, falsePositives };
    }
  }
  return out;
}

function main(): void {
  const [file, version, commit, rulesDir] = process.argv.slice(2);
  if (!file || !version || !commit) throw new Error("usage: tsx scripts/gitleaks-rules.ts <gitleaks.toml> <version> <commit> [<cmd/generate/config/rules>]");
  const toml = parseToml(readFileSync(file, "utf8"));
  const rules: unknown[] = [];
  const skipped: string[] = [];
  for (const rule of toml.arrays.get("rules") ?? []) {
    const id = rule.id as string;
    if (rule.path !== undefined || rule.regex === undefined) {
      skipped.push(id);
      continue;
    }
    const known = new Set(["id", "description", "regex", "entropy", "keywords", "secretGroup", "allowlists", "path"]);
    for (const key of Object.keys(rule)) if (!known.has(key)) throw new Error(`rule ${id}: key ${key}`);
    // A regex caseless as a whole keeps its letters and takes the "i" flag.
    let source = rule.regex as string;
    const caseless = source.startsWith("(?i)") && !source.includes("(?-i");
    if (caseless) source = source.slice(4);
    // gitleaks' "[\w.-]{0,50}?" before a keyword takes the variable's name into the match. A
    // regex engine tries it at every position (50 steps each, 96 rules); the detector finds the
    // keyword first and takes the name in backwards (detect.ts), the same match.
    let leadingName = 0;
    for (;;) {
      if (source.startsWith(NAME_PREFIX)) source = source.slice(NAME_PREFIX.length);
      else if (source.startsWith(`(?i)${NAME_PREFIX}`)) source = `(?i)${source.slice(4 + NAME_PREFIX.length)}`;
      else if (source.startsWith(`(?i:${NAME_PREFIX}`)) source = `(?i:${source.slice(4 + NAME_PREFIX.length)}`;
      else break;
      leadingName += 50;
    }
    const regex = goRegexToJs(source);
    new RegExp(regex, caseless ? "dgi" : "dg");
    // Spelled-out case ([aA][pP][iI]) keeps V8 from scanning for a literal: 10× slower on the corpus.
    // A rule caseless in parts gets a caseless regex to find candidates, the exact one to confirm.
    const loose = !caseless && /\(\?i/.test(source) ? goRegexToJs(source, true) : undefined;
    if (loose) new RegExp(loose, "gi");
    const allowlists = ((rule.allowlists as unknown as Table[] | undefined) ?? []).map((table) => allowlistOf(table, id)).filter((list) => list !== null);
    for (const list of allowlists) for (const source of list.regexes ?? []) new RegExp(source);
    rules.push({
      id,
      regex,
      ...(caseless ? { caseless: true } : {}),
      ...(loose ? { loose } : {}),
      ...(leadingName > 0 ? { leadingName } : {}),
      keywords: ((rule.keywords as string[] | undefined) ?? []).map((word) => word.toLowerCase()),
      ...(rule.entropy === undefined ? {} : { entropy: rule.entropy }),
      ...(rule.secretGroup === undefined ? {} : { secretGroup: rule.secretGroup }),
      ...(allowlists.length > 0 ? { allowlists } : {}),
    });
  }
  const global = allowlistOf(toml.tables.get("allowlist") ?? {}, "global allowlist");
  const here = nodePath.dirname(fileURLToPath(import.meta.url));
  const target = nodePath.join(here, "..", "src", "secrets", "gitleaks-rules.ts");
  const source = `/**
 * gitleaks' default rules (config/gitleaks.toml of gitleaks ${version}, commit ${commit}), as data.
 * Generated by scripts/gitleaks-rules.ts: do not edit; run it again on a newer gitleaks.toml.
 * Each regex is gitleaks' own, rewritten from Go (RE2) for JavaScript (inline flags spelled out).
 * Left out: ${skipped.join(", ")} (rules on file paths; a session has none).
 *
 * gitleaks is MIT-licensed:
 *
 * MIT License
 *
 * Copyright (c) 2019 Zachary Rice
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
import type { RuleData, AllowlistData } from "./rule-data.js";

export const GITLEAKS_VERSION = ${JSON.stringify(version)};

export const GITLEAKS_RULES: readonly RuleData[] = ${JSON.stringify(rules, null, 1)};

export const GITLEAKS_GLOBAL_ALLOWLIST: AllowlistData = ${JSON.stringify(global)};
`;
  writeFileSync(target, source);
  console.log(`${target}: ${rules.length} rules (${skipped.length} left out: ${skipped.join(", ")}), ${source.length} bytes`);
  if (rulesDir) {
    // Only the rules of the default config (a few sources define rules it does not register).
    const ids = new Set(rules.map((rule) => (rule as { id: string }).id));
    const samples = Object.fromEntries(Object.entries(ruleSamples(rulesDir)).filter(([id]) => ids.has(id)));
    const fixture = nodePath.join(here, "..", "test", "fixtures", "gitleaks-samples.json");
    writeFileSync(fixture, `${JSON.stringify({ source: `gitleaks ${version} (commit ${commit}), cmd/generate/config/rules/*.go, MIT`, rules: samples }, null, 1)}\n`);
    const count = Object.values(samples).reduce((n, rule) => n + rule.truePositives.length + rule.falsePositives.length, 0);
    console.log(`${fixture}: ${count} samples of ${Object.keys(samples).length} rules`);
  }
}

main();
