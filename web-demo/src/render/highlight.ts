/**
 * Syntax highlighting with highlight.js, loaded on first use: its core, then each language when
 * code in it first shows (each a chunk of its own; registering all common languages at once cost
 * a long task). Code is shown plain at once and highlighted when its language is there, which is
 * after the frame that shows it first (an exported page has the modules in its script: they
 * would load, and highlight, before its first paint); very long code stays plain (highlighting it
 * would block the page). hljs escapes the text it is given and marks it up with class-only
 * spans; its output is read as exactly that (highlightedNodes), never parsed as HTML.
 */
import type { HLJSApi } from "highlight.js";
import { afterNextPaint } from "./dom.js";
import { isLanguageName, type LanguageName } from "./highlight-languages.js";
import { highlightModules } from "./highlight-modules.js";

/** Larger code is shown plain: highlighting cost grows with size, and this bounds one call. */
const MAX_HIGHLIGHT_CHARS = 100_000;
/** Guessing a language (no fence info) costs a pass per language: only for short code. */
const MAX_AUTO_DETECT_CHARS = 4_000;

const ALIASES: Record<string, string> = { ts: "typescript", js: "javascript", sh: "bash", zsh: "bash", py: "python", rs: "rust", yml: "yaml", html: "xml", md: "markdown", console: "shell", jsonc: "json", golang: "go" };
/** Languages guessed between for code without a name (short code in prose only). */
const GUESSED: LanguageName[] = ["typescript", "javascript", "python", "bash", "json", "shell"];

let hljs: HLJSApi | null = null;
let core: Promise<HLJSApi> | null = null;
const languages = new Map<LanguageName, Promise<void>>();
const waiting = new Set<HTMLElement>();

const languageName = (lang: string) => {
  const lower = lang.toLowerCase();
  return ALIASES[lower] ?? lower;
};

/** Loads the core and the named languages (after the next frame); resolves when they are registered. */
function load(names: readonly LanguageName[]): Promise<void> {
  core ??= afterNextPaint()
    .then(() => highlightModules.core())
    .then((api) => (hljs = api));
  return Promise.all(
    names.map((name) => {
      let loading = languages.get(name);
      if (!loading) {
        loading = Promise.all([core!, afterNextPaint().then(() => highlightModules.language(name))]).then(([api, language]) => void api.registerLanguage(name, language));
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
    const name = lang ? languageName(lang) : null;
    if (name !== null && !isLanguageName(name)) {
      block.dataset.highlighted = "no";
      continue;
    }
    const names = name === null ? GUESSED : [name];
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
  const nodes = html === null ? null : highlightedNodes(html);
  if (nodes === null) return;
  block.classList.add("hljs");
  block.replaceChildren(nodes);
}

/** One piece of hljs's HTML: a span with its classes, a span's end, a character it escaped, or text. */
const HIGHLIGHTED_PIECE = /<span class="([\w -]+)">|<\/span>|&(amp|lt|gt|quot|#x27);|[^<&]+/y;
const ESCAPED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'" };

/** hljs's HTML as DOM, or null when it is anything else (the code then stays plain). */
export function highlightedNodes(html: string): DocumentFragment | null {
  const fragment = document.createDocumentFragment();
  const open: Node[] = [fragment];
  let text = "";
  const flush = () => {
    if (text) open[open.length - 1]!.appendChild(document.createTextNode(text));
    text = "";
  };
  HIGHLIGHTED_PIECE.lastIndex = 0;
  while (HIGHLIGHTED_PIECE.lastIndex < html.length) {
    const piece = HIGHLIGHTED_PIECE.exec(html);
    if (piece === null) return null;
    if (piece[1] !== undefined) {
      flush();
      const span = document.createElement("span");
      span.className = piece[1];
      open.push(open[open.length - 1]!.appendChild(span));
    } else if (piece[0] === "</span>") {
      if (open.length === 1) return null;
      flush();
      open.pop();
    } else text += piece[2] !== undefined ? ESCAPED[piece[2]]! : piece[0];
  }
  flush();
  return open.length === 1 ? fragment : null;
}
