/**
 * highlight.js in an exported page (the export build puts this module in place of
 * render/highlight-modules.ts: vite.config.ts). It is not in the page's script, which the first
 * screen waits for, but in a block of the page the browser does not run
 * (`<script type="text/x-sessionkit-deferred" id="sessionkit-highlight">`, built from
 * highlight-bundle.ts). The first time code is highlighted (after the first paint:
 * render/highlight.ts) the block's text goes into a script element, which the page's Content
 * Security Policy allows by its hash, and runs: it leaves render/highlight-modules.ts's loaders
 * on `globalThis` under HIGHLIGHT_GLOBAL.
 */
import type { HighlightModules } from "../render/highlight-modules.js";

export const HIGHLIGHT_BLOCK_ID = "sessionkit-highlight";
export const HIGHLIGHT_GLOBAL = "sessionkitHighlight";

let loaded: HighlightModules | null = null;

function run(): HighlightModules {
  if (loaded) return loaded;
  const block = document.getElementById(HIGHLIGHT_BLOCK_ID);
  if (!block) throw new Error(`this page has no highlighter (no #${HIGHLIGHT_BLOCK_ID})`);
  const script = document.createElement("script");
  script.textContent = block.textContent;
  document.head.append(script); // an inline script runs as it is inserted
  loaded = (globalThis as { [HIGHLIGHT_GLOBAL]?: HighlightModules })[HIGHLIGHT_GLOBAL] ?? null;
  if (!loaded) throw new Error("the page's highlighter did not run");
  return loaded;
}

export const highlightModules: HighlightModules = {
  core: async () => run().core(),
  language: async (name) => run().language(name),
};
