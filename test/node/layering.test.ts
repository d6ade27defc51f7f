/**
 * DESIGN.md §1: core code (all of src/) imports nothing from adapters/, cli/, Node built-ins
 * or backend libraries and touches no DOM globals; adapters depend on src/port.ts only, and the
 * pieces they share (adapters/kit/) on nothing else.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await tsFiles(path)));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const match of source.matchAll(pattern)) specifiers.push((match[1] ?? match[2])!);
  return specifiers;
}

const NODE_BUILTINS = /^(node:|fs$|fs\/|path$|os$|child_process$|crypto$|url$|util$|stream$|worker_threads$)/;
const BACKEND_LIBS = /^(idb$|idb\/|electron$)/;
/**
 * The libraries core code may use: each runs unchanged in Node and in browsers (the browser
 * project runs the core on them: zod in every suite, zip.js and hash-wasm in the archive tests,
 * SQLite's WASM build in the search tests).
 */
const ISOMORPHIC_LIBS = new Set(["zod/mini", "zod/v4/locales/en.js", "@zip.js/zip.js", "hash-wasm", "@sqlite.org/sqlite-wasm"]);
/** `sessionkit/testing` registers vitest tests: vitest, an optional peer dependency, is for it alone. */
const TESTING_LIBS = new Set(["vitest"]);
const TESTING_DIR = "src/testing/";
const DOM_GLOBALS = /\b(window|document|localStorage|indexedDB|navigator|self|process)\s*[.[]/;
/** Runtime lookups that sidestep imports; the one allowed is base64's optional use of Node's Buffer. */
const GLOBAL_LOOKUPS = /globalThis\s+as\s*{\s*(\w+)/g;
const ALLOWED_GLOBAL_LOOKUPS = new Map([["src/blobs/base64.ts", new Set(["Buffer"])]]);

describe("layering (DESIGN.md §1)", () => {
  it("core imports no adapters, Node built-ins or backend libraries, and uses no DOM globals", async () => {
    const files = await tsFiles(join(ROOT, "src"));
    expect(files.length).toBeGreaterThan(5);
    const violations: string[] = [];
    for (const file of files) {
      const source = await readFile(file, "utf8");
      for (const specifier of importsOf(source)) {
        if (specifier.includes("adapters/") || /(^|\/)cli\//.test(specifier) || NODE_BUILTINS.test(specifier) || BACKEND_LIBS.test(specifier)) {
          violations.push(`${relative(ROOT, file)} imports ${specifier}`);
        }
      }
      const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (DOM_GLOBALS.test(code)) violations.push(`${relative(ROOT, file)} uses a DOM or Node global`);
      for (const [, name] of code.matchAll(GLOBAL_LOOKUPS)) {
        if (!ALLOWED_GLOBAL_LOOKUPS.get(relative(ROOT, file))?.has(name!)) violations.push(`${relative(ROOT, file)} looks up globalThis.${name}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("core imports only its own modules and libraries that run in both Node and browsers", async () => {
    const others: string[] = [];
    for (const file of await tsFiles(join(ROOT, "src"))) {
      for (const specifier of importsOf(await readFile(file, "utf8"))) {
        const allowed = ISOMORPHIC_LIBS.has(specifier) || (relative(ROOT, file).startsWith(TESTING_DIR) && TESTING_LIBS.has(specifier));
        if (!specifier.startsWith(".") && !allowed) others.push(`${relative(ROOT, file)} imports ${specifier}`);
      }
    }
    expect(others).toEqual([]);
  });

  it("adapters import from src/ only the port", async () => {
    const violations: string[] = [];
    for (const file of await tsFiles(join(ROOT, "adapters"))) {
      for (const specifier of importsOf(await readFile(file, "utf8"))) {
        if (specifier.includes("/src/") && !/\/src\/port\.js$/.test(specifier)) violations.push(`${relative(ROOT, file)} imports ${specifier}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("the adapter kit imports only the port and its own modules", async () => {
    const files = await tsFiles(join(ROOT, "adapters/kit"));
    expect(files.length).toBeGreaterThan(0);
    const violations: string[] = [];
    for (const file of files) {
      for (const specifier of importsOf(await readFile(file, "utf8"))) {
        if (!specifier.startsWith("./") && specifier !== "../../src/port.js") violations.push(`${relative(ROOT, file)} imports ${specifier}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("the checker sees a violation when there is one", () => {
    expect(importsOf('import { readFile } from "node:fs/promises";\nexport { x } from "../adapters/memory/index.js";')).toEqual([
      "node:fs/promises",
      "../adapters/memory/index.js",
    ]);
    expect(DOM_GLOBALS.test("const x = window.location;")).toBe(true);
    expect(DOM_GLOBALS.test("const env = process.env;")).toBe(true);
    expect([..."(globalThis as { Buffer?: B }).Buffer".matchAll(GLOBAL_LOOKUPS)].map((m) => m[1])).toEqual(["Buffer"]);
  });
});
