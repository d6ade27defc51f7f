/**
 * The rule set: gitleaks' rules (gitleaks-rules.ts) and what sessions need beyond them, compiled
 * once, on first use. Order is priority: where two findings overlap, the earlier rule's stands
 * (a GitHub token in a `GITHUB_TOKEN=` line is a github-pat, not an env-assignment).
 */
import { GITLEAKS_GLOBAL_ALLOWLIST, GITLEAKS_RULES, GITLEAKS_VERSION } from "./gitleaks-rules.js";
import { KeywordAutomaton } from "./keywords.js";
import type { AllowlistData, RuleData } from "./rule-data.js";

/** Values that stand for a secret in docs and examples, not secrets. */
const PLACEHOLDER =
  "^(?:x+|X+|\\*+|\\.+|#+|-+|_+|0+|1234.*|(?:my|your|the|some|a|an|example|sample|dummy|fake|test|placeholder|redacted|changeme|change_me|changeit|replace)(?:[_-].*)?|.*(?:here|xxxx|\\.\\.\\.)|(?:secret|password|passwd|pass|pwd|token|apikey|api_key|key|none|null|nil|true|false|undefined|empty|required|optional)s?)$";

/**
 * sessionkit's rules for what sessions hold: `.env` and config assignments, Authorization headers
 * and passwords in connection URLs. Their values are those of an assignment, not references:
 * `$VAR`, `${…}`, `process.env.X`, `<token>` and placeholders are left alone.
 */
const SESSION_RULES: readonly RuleData[] = [
  {
    // `OPENAI_API_KEY=sk-…`, `export DB_PASSWORD="…"`, `"GITHUB_TOKEN": "…"`, `API_SECRET: …`.
    id: "env-assignment",
    regex:
      "(?:^|[^A-Za-z0-9_])(?:export\\s+)?[\"']?((?:[A-Z][A-Z0-9_]*_)?(?:API_?KEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|AUTH_KEY|SECRET|TOKEN|PASSWORD|PASSWD)|[A-Z][A-Z0-9_]*_(?:PWD|PASS))[\"']?[ \\t]*(?:=|:)[ \\t]*[\"'`]?([^\\s\"'`;#(){}\\[\\]<>$,\\\\|&]{6,200})(?=$|[\\s\"'`;,\\\\|&)}\\]])",
    keywords: ["key", "secret", "token", "pass", "pwd"],
    secretGroup: 2,
    allowlists: [
      {
        regexes: [
          PLACEHOLDER,
          // Another variable, a dotted reference (process.env.X, settings.token), a path, a type, a plain word.
          "^[A-Z][A-Z0-9]*_[A-Z0-9_]+$",
          "^(?:/|\\./|~/)",
          "^[A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)+$",
          "^[A-Za-z][a-z]+$",
          "^(?:str|string|int|number|bool|boolean|bytes|optional\\[.*|list\\[.*|dict\\[.*)$",
        ],
      },
    ],
  },
  {
    id: "authorization-bearer",
    regex: "Authorization[\"']?\\s*[:=]\\s*[\"'`]?(?:Bearer|Token)\\s+([A-Za-z0-9._~+/=-]{8,})",
    caseless: true,
    keywords: ["authorization"],
    allowlists: [{ regexes: [PLACEHOLDER, "^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$", "^(?:token|bearer|access_?token|api_?key)s?$"] }],
  },
  {
    id: "authorization-basic",
    regex: "Authorization[\"']?\\s*[:=]\\s*[\"'`]?Basic\\s+([A-Za-z0-9+/]{8,}={0,2})",
    caseless: true,
    keywords: ["authorization"],
    allowlists: [{ regexes: [PLACEHOLDER, "^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"] }],
  },
  {
    // postgres://user:password@host, mysql, mongodb+srv, redis, amqp, https://user:password@host, ...
    id: "url-password",
    regex:
      "\\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|jdbc:[a-z]+|https?|ftps?|sftp|smtps?|ldaps?|ssh|git)://[^\\s:/?#@'\"`<>]+:([^\\s/?#@'\"`<>]+)@[A-Za-z0-9.\\[\\]-]",
    caseless: true,
    keywords: ["://"],
    allowlists: [{ regexes: [PLACEHOLDER, "^(?:\\$.*|\\{.*|%.*|:.*)$", "^(?:postgres|root|admin|guest|user|mysql|redis)$"] }],
  },
];

/**
 * gitleaks' rules named for where a secret is rather than what it is (a curl command's header or
 * user, any `key = value` pair): run after the others, so a token both find is named by what it is
 * (a GitHub token in `curl -H "Authorization: Bearer ghp_…"` is a github-pat).
 */
const LAST_RULES = new Set(["curl-auth-header", "curl-auth-user", "generic-api-key"]);

export interface CompiledAllowlist {
  regexes: RegExp[];
  target: "secret" | "match" | "line";
  stopwords: string[];
  all: boolean;
}

export interface CompiledRule {
  id: string;
  /** Finds matches; sticky ("y") when `loose` finds the candidates. */
  regex: RegExp;
  loose: RegExp | null;
  leadingName: number;
  /** A rule for one issuer's tokens (not sessionkit's own, not gitleaks' generic one): their type prefix is public. */
  typed: boolean;
  keywords: string[];
  /** The keywords' indices in the rule set's automaton. */
  keywordIds: number[];
  entropy: number;
  secretGroup: number;
  allowlists: CompiledAllowlist[];
}

export interface RuleSet {
  rules: CompiledRule[];
  global: CompiledAllowlist;
  /** Finds every rule's keywords in a text, in one pass. */
  keywords: KeywordAutomaton;
  /** Names this rule set: a cache of findings made with another is stale. */
  fingerprint: string;
}

function compileAllowlist(data: AllowlistData): CompiledAllowlist {
  return {
    regexes: (data.regexes ?? []).map((source) => new RegExp(source)),
    target: data.regexTarget ?? "secret",
    stopwords: data.stopwords ?? [],
    all: data.condition === "and",
  };
}

function compileRule(data: RuleData, typed: boolean, words: readonly string[]): CompiledRule {
  return {
    typed,
    keywordIds: data.keywords.map((word) => words.indexOf(word)),
    id: data.id,
    regex: new RegExp(data.regex, (data.caseless ? "di" : "d") + (data.loose ? "y" : "g")),
    loose: data.loose ? new RegExp(data.loose, "gi") : null,
    leadingName: data.leadingName ?? 0,
    keywords: data.keywords,
    entropy: data.entropy ?? 0,
    secretGroup: data.secretGroup ?? 0,
    allowlists: (data.allowlists ?? []).map(compileAllowlist),
  };
}

/** FNV-1a of the text, in hex: a short name for the rule set's data. */
function fingerprintOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

let compiled: RuleSet | undefined;

/** The rule set, compiled on first use (a bundle that never scans pays no compile). */
export function ruleSet(): RuleSet {
  if (compiled) return compiled;
  const named = GITLEAKS_RULES.filter((rule) => !LAST_RULES.has(rule.id));
  const last = GITLEAKS_RULES.filter((rule) => LAST_RULES.has(rule.id));
  const data = [...named, ...SESSION_RULES, ...last];
  const words = [...new Set(data.flatMap((rule) => rule.keywords))];
  compiled = {
    rules: data.map((rule) => compileRule(rule, named.includes(rule), words)),
    global: compileAllowlist(GITLEAKS_GLOBAL_ALLOWLIST),
    keywords: new KeywordAutomaton(words),
    fingerprint: `${GITLEAKS_VERSION}:${fingerprintOf(JSON.stringify([data, GITLEAKS_GLOBAL_ALLOWLIST]))}`,
  };
  return compiled;
}
