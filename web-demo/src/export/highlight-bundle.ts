/**
 * The exported page's highlighter block (export/highlight-modules.ts): highlight.js's core and
 * every language of render/highlight-modules.ts in one script, built on its own (vite.config.ts),
 * which hands the loaders over on `globalThis` when it runs.
 */
import { highlightModules } from "../render/highlight-modules.js";
import { HIGHLIGHT_GLOBAL } from "./highlight-modules.js";

(globalThis as Record<string, unknown>)[HIGHLIGHT_GLOBAL] = highlightModules;
