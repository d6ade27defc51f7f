/**
 * Syntax highlighting with highlight.js, loaded on first use: its core, then each language when
 * code in it first shows (each a chunk of its own; registering all common languages at once cost
 * a long task). Code is shown plain at once and highlighted when its language is there; very long
 * code stays plain (highlighting it would block the page). hljs escapes the text it is given; its
 * output is still sanitized to class-only spans.
 */
import type { HLJSApi, LanguageFn } from "highlight.js";
import { sanitizeHighlighted } from "./markdown.js";

/** Larger code is shown plain: highlighting cost grows with size, and this bounds one call. */
const MAX_HIGHLIGHT_CHARS = 100_000;
/** Guessing a language (no fence info) costs a pass per language: only for short code. */
const MAX_AUTO_DETECT_CHARS = 4_000;

const LANGUAGES: Record<string, () => Promise<{ default: LanguageFn }>> = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  csharp: () => import("highlight.js/lib/languages/csharp"),
  css: () => import("highlight.js/lib/languages/css"),
  diff: () => import("highlight.js/lib/languages/diff"),
  dockerfile: () => import("highlight.js/lib/languages/dockerfile"),
  go: () => import("highlight.js/lib/languages/go"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  kotlin: () => import("highlight.js/lib/languages/kotlin"),
  less: () => import("highlight.js/lib/languages/less"),
  lua: () => import("highlight.js/lib/languages/lua"),
  makefile: () => import("highlight.js/lib/languages/makefile"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  perl: () => import("highlight.js/lib/languages/perl"),
  php: () => import("highlight.js/lib/languages/php"),
  python: () => import("highlight.js/lib/languages/python"),
  r: () => import("highlight.js/lib/languages/r"),
  ruby: () => import("highlight.js/lib/languages/ruby"),
  rust: () => import("highlight.js/lib/languages/rust"),
  scss: () => import("highlight.js/lib/languages/scss"),
  shell: () => import("highlight.js/lib/languages/shell"),
  sql: () => import("highlight.js/lib/languages/sql"),
  swift: () => import("highlight.js/lib/languages/swift"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
};
const ALIASES: Record<string, string> = { ts: "typescript", js: "javascript", sh: "bash", zsh: "bash", py: "python", rs: "rust", yml: "yaml", html: "xml", md: "markdown", console: "shell", jsonc: "json", golang: "go" };
/** Languages guessed between for code without a name (short code in prose only). */
const GUESSED = ["typescript", "javascript", "python", "bash", "json", "shell"];

let hljs: HLJSApi | null = null;
let core: Promise<HLJSApi> | null = null;
const languages = new Map<string, Promise<void>>();
const waiting = new Set<HTMLElement>();

const languageName = (lang: string) => {
  const lower = lang.toLowerCase();
  return ALIASES[lower] ?? lower;
};

/** Loads the core and the named languages; resolves when they are registered. */
function load(names: readonly string[]): Promise<void> {
  core ??= import("highlight.js/lib/core").then((module) => (hljs = module.default));
  return Promise.all(
    names.map((name) => {
      let loading = languages.get(name);
      if (!loading) {
        const loader = LANGUAGES[name];
        loading = loader ? Promise.all([core!, loader()]).then(([api, language]) => void api.registerLanguage(name, language.default)) : core!.then(() => undefined);
        languages.set(name, loading);
      }
      return loading;
    }),
  ).then(() => undefined);
}

const EXTENSION_LANGUAGES: Record<string, string> = {
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript", js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
  py: "python", rb: "ruby", rs: "rust", go: "go", java: "java", kt: "kotlin", swift: "swift", c: "c", cpp: "cpp", cc: "cpp", h: "c", hpp: "cpp",
  cs: "csharp", php: "php", sh: "bash", bash: "bash", zsh: "bash", sql: "sql", html: "xml", xml: "xml", svg: "xml", css: "css", scss: "scss",
  less: "less", json: "json", yaml: "yaml", yml: "yaml", toml: "ini", ini: "ini", md: "markdown", lua: "lua", pl: "perl", r: "r", diff: "diff",
};

/** The language of a file path from its extension (pi's getLanguageFromPath, a few more). */
export function languageOfPath(path: string): string | undefined {
  const base = path.split(/[\\/]/).pop() ?? "";
  if (/^dockerfile$/i.test(base)) return "dockerfile";
  if (/^makefile$/i.test(base)) return "makefile";
  const dot = base.lastIndexOf(".");
  return dot < 0 ? undefined : EXTENSION_LANGUAGES[base.slice(dot + 1).toLowerCase()];
}

/** Highlights the `code` elements under `root` that carry `data-lang` (or none, for short code in prose) and are not highlighted yet. */
export function highlightWithin(root: ParentNode): void {
  const blocks = root.querySelectorAll<HTMLElement>("pre > code:not([data-highlighted])");
  for (const block of blocks) {
    const text = block.textContent ?? "";
    if (text.length > MAX_HIGHLIGHT_CHARS) continue;
    const lang = block.dataset.lang;
    // Guessing is for code in prose (markdown fences without a language), not for tool output.
    if (!lang && (text.length > MAX_AUTO_DETECT_CHARS || !block.closest(".markdown"))) continue;
    const names = lang ? [languageName(lang)] : GUESSED;
    if (names.some((name) => LANGUAGES[name] === undefined)) {
      block.dataset.highlighted = "no";
      continue;
    }
    if (hljs && names.every((name) => hljs!.getLanguage(name))) {
      highlightBlock(block, names);
      continue;
    }
    waiting.add(block);
    void load(names).then(() => {
      if (!waiting.delete(block)) return;
      if (block.isConnected) highlightBlock(block, names);
    });
  }
}

function highlightBlock(block: HTMLElement, names: readonly string[]): void {
  if (!hljs || block.dataset.highlighted) return;
  const text = block.textContent ?? "";
  let html: string | null = null;
  try {
    html = block.dataset.lang ? hljs.highlight(text, { language: names[0]!, ignoreIllegals: true }).value : hljs.highlightAuto(text, [...names]).value;
  } catch {
    html = null;
  }
  block.dataset.highlighted = "yes";
  if (html === null) return;
  block.classList.add("hljs");
  block.replaceChildren(sanitizeHighlighted(html));
}


