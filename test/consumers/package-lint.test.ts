/**
 * The tarball as linters for published packages read it: publint (package.json against the files
 * it ships) and arethetypeswrong (each entry point's types as TypeScript resolves them; the
 * esm-only profile, since the package has no CommonJS build).
 */
import { describe, expect, inject, it } from "vitest";
import { REPO, run } from "./consumer.js";

const tarball = inject("tarball");

describe("the tarball under package linters", () => {
  it("publint finds nothing to report, suggestions included", async () => {
    const result = await run("npx", ["--no-install", "publint", "run", tarball, "--strict", "--level", "suggestion"], REPO);
    expect(result.stdout + result.stderr).toContain("All good!");
    expect(result.code).toBe(0);
  });

  it("arethetypeswrong finds no problem in any entry point", async () => {
    const result = await run("npx", ["--no-install", "attw", tarball, "--profile", "esm-only", "--format", "json"], REPO);
    const report = JSON.parse(result.stdout) as { analysis: { problems: { kind: string; resolutionKind?: string }[]; entrypoints: Record<string, unknown> } };
    // ESM only, on purpose: a CommonJS caller imports it with import(), as the profile allows.
    const problems = report.analysis.problems.filter((problem) => !(problem.kind === "CJSResolvesToESM" && problem.resolutionKind === "node16-cjs"));
    expect(problems).toEqual([]);
    expect(Object.keys(report.analysis.entrypoints).length).toBeGreaterThan(10);
    expect(result.code).toBe(0);
  });
});
