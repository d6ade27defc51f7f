/**
 * Syntax highlighting with highlight.js, loaded on first use (its common languages are a chunk
 * of their own, fetched only when a session shows code). Code is shown plain at once and
 * highlighted when the library is there; very long code stays plain (highlighting it would block
 * the page). hljs escapes the text it is given; its output is still sanitized to class-only spans.
 */
import type { HLJSApi } from "highlight.js";
import { sanitizeHighlighted } from "./markdown.js";

/** Larger code is shown plain: highlighting cost grows with size, and this bounds one call. */
export const MAX_HIGHLIGHT_CHARS = 100_000;
/** Guessing a language (no fence info) costs a pass per language: only for short code. */
const MAX_AUTO_DETECT_CHARS = 4_000;

let hljs: HLJSApi | null = null;
let loading: Promise<HLJSApi> | null = null;
const waiting = new Set<Element>();

function load(): Promise<HLJSApi> {
  loading ??= import("highlight.js/lib/common").then((module) => {
    hljs = module.default;
    return hljs;
  });
  return loading;
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

/**
 * Highlights `code` elements under `root` that carry `data-lang` (or none, for short code) and
 * are not highlighted yet; `onLoaded` runs once highlight.js arrives, for elements that waited.
 */
export function highlightWithin(root: ParentNode): void {
  const blocks = root.querySelectorAll<HTMLElement>("pre > code:not([data-highlighted])");
  for (const block of blocks) {
    const text = block.textContent ?? "";
    if (text.length > MAX_HIGHLIGHT_CHARS) continue;
    const lang = block.dataset.lang;
    // Guessing is for code in prose (markdown fences without a language), not for tool output.
    if (!lang && (text.length > MAX_AUTO_DETECT_CHARS || !block.closest(".markdown"))) continue;
    if (!hljs) {
      waiting.add(block);
      void load().then(() => {
        for (const element of waiting) if (element.isConnected) highlightBlock(element as HTMLElement);
        waiting.clear();
      });
      continue;
    }
    highlightBlock(block);
  }
}

function highlightBlock(block: HTMLElement): void {
  if (!hljs || block.dataset.highlighted) return;
  const text = block.textContent ?? "";
  const lang = block.dataset.lang;
  let html: string | null = null;
  try {
    if (lang && hljs.getLanguage(lang)) html = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
    else if (!lang) html = hljs.highlightAuto(text).value;
  } catch {
    html = null;
  }
  block.dataset.highlighted = "yes";
  if (html === null) return;
  block.classList.add("hljs");
  block.replaceChildren(sanitizeHighlighted(html));
}

/** For tests: resolves when highlight.js has loaded. */
export function highlighterReady(): Promise<unknown> {
  return load();
}
