/** The languages render/highlight.ts highlights (highlight.js's names); each has a loader in highlight-modules.ts. */
const LANGUAGE_NAMES = [
  "bash",
  "c",
  "cpp",
  "csharp",
  "css",
  "diff",
  "dockerfile",
  "go",
  "ini",
  "java",
  "javascript",
  "json",
  "kotlin",
  "less",
  "lua",
  "makefile",
  "markdown",
  "perl",
  "php",
  "python",
  "r",
  "ruby",
  "rust",
  "scss",
  "shell",
  "sql",
  "swift",
  "typescript",
  "xml",
  "yaml",
] as const;

export type LanguageName = (typeof LANGUAGE_NAMES)[number];

const NAMES: ReadonlySet<string> = new Set(LANGUAGE_NAMES);

export function isLanguageName(name: string): name is LanguageName {
  return NAMES.has(name);
}
