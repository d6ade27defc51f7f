/**
 * A user's clone has nothing beside it: no file of the repository may reach outside it for the
 * reference material that sits beside a developer's checkout (../shared). Every relative path
 * that climbs to a "shared" folder must land inside the repository (test/shared is ours).
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO } from "../shared/cli-runner.js";

/** Generated or installed: not part of the repository's text. */
const SKIPPED_DIRS = new Set([".git", "node_modules", "dist", "samples", "test-results", "playwright-report", ".vite"]);
const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|json|md|html|css|sh|yml|yaml|tsv)$|^(run|before-stop|Makefile)$/;

async function textFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...(await textFiles(join(dir, entry.name))));
    } else if (TEXT_FILE.test(entry.name)) {
      out.push(join(dir, entry.name));
    }
  }
  return out;
}

/** Each place in `text` (a file in `dir`) that reaches a "shared" folder outside the repository. */
function reachesOutside(text: string, dir: string, repo: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/((?:\.\.\/)+)shared\b/g)) {
    const target = resolve(dir, match[1]!, "shared");
    if (target !== repo && !target.startsWith(repo + sep)) found.push(match[0]);
  }
  // path.join(…, "..", "shared") and the like.
  for (const match of text.matchAll(/["'`]\.\.["'`]\s*,\s*["'`]shared["'`]/g)) found.push(match[0]);
  return found;
}

describe("the repository is self-contained", () => {
  it("the checker tells a path into test/shared from one out of the repository", () => {
    const repo = "/clone/sessionkit";
    expect(reachesOutside('import { x } from "../shared/corpus.js";', `${repo}/test/node`, repo)).toEqual([]);
    expect(reachesOutside('join(REPO, "../shared/corpus/a.jsonl")', repo, repo)).toEqual(["../shared"]);
    expect(reachesOutside('"../../../shared/seeds"', `${repo}/test/node`, repo)).toEqual(["../../../shared"]);
    expect(reachesOutside('join(REPO, "..", "shared", "corpus")', repo, repo)).toEqual(['"..", "shared"']);
  });

  it("no file reads ../shared", async () => {
    // This file holds examples of what it looks for.
    const files = (await textFiles(REPO)).filter((file) => file !== fileURLToPath(import.meta.url));
    expect(files.length).toBeGreaterThan(50);
    const violations: string[] = [];
    for (const file of files) {
      for (const hit of reachesOutside(await readFile(file, "utf8"), dirname(file), REPO)) violations.push(`${relative(REPO, file)}: ${hit}`);
    }
    expect(violations).toEqual([]);
  });
});
