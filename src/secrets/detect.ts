/**
 * Finding secrets in one text, as gitleaks does: the rules whose keywords the text holds run their
 * regex; each match's secret (its secret group, else its first group that matched, else the
 * match) must pass the rule's entropy and no allowlist may take it. Overlapping findings keep the
 * one of the earlier rule (rules.ts orders them).
 */
import { maskSecret } from "./mask.js";
import { ruleSet, type CompiledAllowlist, type CompiledRule } from "./rules.js";

/**
 * One secret in a text: where it is (UTF-16 offsets, `end` exclusive), its kind (the rule's id)
 * and a masked preview; never the secret itself.
 * @category Secrets
 */
export interface SecretMatch {
  /** The rule that found it (gitleaks' rule ids, and env-assignment, authorization-bearer, authorization-basic, url-password). */
  kind: string;
  /** Where the secret starts in the text (a UTF-16 offset). */
  start: number;
  /** Where it ends (exclusive). */
  end: number;
  /** A few characters of a known prefix and the last ones, e.g. `sk-ant-…Q2xA`. */
  preview: string;
}

const NAME_CHAR = /[\w.-]/;

/** Texts shorter than this hold no secret any rule finds. */
const SHORTEST = 8;

/** Bits per character, over the characters of `text` (gitleaks' shannonEntropy). */
function entropyOf(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

function lineAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf("\n", start - 1) + 1;
  const to = text.indexOf("\n", end);
  return text.slice(from, to < 0 ? text.length : to);
}

function allowed(lists: readonly CompiledAllowlist[], secret: string, match: string, line: () => string): boolean {
  for (const list of lists) {
    const target = list.target === "secret" ? secret : list.target === "match" ? match : line();
    const byRegex = list.regexes.length > 0 && list.regexes.some((regex) => regex.test(target));
    const lower = list.stopwords.length > 0 ? secret.toLowerCase() : "";
    const byStopword = list.stopwords.length > 0 && list.stopwords.some((word) => lower.includes(word));
    if (list.all ? (list.regexes.length === 0 || byRegex) && (list.stopwords.length === 0 || byStopword) : byRegex || byStopword) return true;
  }
  return false;
}

/** The secret's span in a match: the rule's group, else the first group that matched, else the match without its newlines. */
function secretSpan(rule: CompiledRule, match: RegExpExecArray): [number, number] | null {
  const indices = match.indices!;
  if (rule.secretGroup > 0) return indices[rule.secretGroup] ?? null;
  for (let group = 1; group < indices.length; group++) {
    const span = indices[group];
    if (span && span[1] > span[0]) return span;
  }
  let [start, end] = indices[0]!;
  while (start < end && match.input[start] === "\n") start++;
  while (end > start && match.input[end - 1] === "\n") end--;
  return [start, end];
}

/**
 * The rule's matches in `text`, left to right, as its regex's global search finds them. With a
 * loose regex: each of its candidates confirmed by the exact (sticky) regex where it starts, the
 * search going on after a confirmed match or one character after a refused candidate.
 */
function* matchesOf(rule: CompiledRule, text: string): Generator<RegExpExecArray> {
  const { regex, loose } = rule;
  const finder = loose ?? regex;
  finder.lastIndex = 0;
  for (let found = finder.exec(text); found; found = finder.exec(text)) {
    let match: RegExpExecArray | null = found;
    if (loose) {
      regex.lastIndex = found.index;
      match = regex.exec(text);
      if (!match) {
        loose.lastIndex = found.index + 1;
        continue;
      }
    }
    finder.lastIndex = match.index + Math.max(1, match[0].length);
    if (match[0] !== "") yield match;
  }
}

/**
 * Which rules {@link findSecrets} runs.
 * @category Secrets
 */
export interface FindOptions {
  /** Only the rules of these kinds (rule ids); default: every rule. */
  kinds?: readonly string[];
}

/**
 * The secrets in `text`, in text order, none overlapping another.
 * @category Secrets
 */
export function findSecrets(text: string, options: FindOptions = {}): SecretMatch[] {
  if (text.length < SHORTEST) return [];
  const rules = ruleSet();
  const present = new Uint8Array(rules.keywords.words.length);
  if (rules.keywords.mark(text, present) === 0) return [];
  const found: SecretMatch[] = [];
  for (const rule of rules.rules) {
    if (rule.keywordIds.length > 0 && !rule.keywordIds.some((id) => present[id] === 1)) continue;
    if (options.kinds && !options.kinds.includes(rule.id)) continue;
    let previousEnd = 0;
    for (const match of matchesOf(rule, text)) {
      // The name before the keyword, as gitleaks' leading [\w.-]{0,50}? takes it in.
      let matchStart = match.index;
      while (matchStart > previousEnd && match.index - matchStart < rule.leadingName && NAME_CHAR.test(text[matchStart - 1]!)) matchStart--;
      const matchEnd = match.index + match[0].length;
      previousEnd = matchEnd;
      const span = secretSpan(rule, match);
      if (!span || span[1] <= span[0]) continue;
      const [start, end] = span;
      if (found.some((other) => start < other.end && other.start < end)) continue;
      const secret = text.slice(start, end);
      if (rule.entropy > 0 && entropyOf(secret) <= rule.entropy) continue;
      const whole = text.slice(matchStart, matchEnd);
      const line = () => lineAround(text, matchStart, matchEnd);
      if (allowed([rules.global], secret, whole, line) || allowed(rule.allowlists, secret, whole, line)) continue;
      found.push({ kind: rule.id, start, end, preview: maskSecret(secret, rule.keywords, rule.typed) });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}
