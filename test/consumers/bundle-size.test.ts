/**
 * What a browser app pays for sessionkit, measured on the installed tarball: scripts/bundle-size.ts
 * bundles each scenario (esbuild, minified, gzipped) and fails past its limit, or when an app built
 * with code splitting loads the secrets scanner or the archive code (zip.js) before its import().
 * The table it prints is the figure CI reports.
 */
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { REPO, run } from "./consumer.js";

const consumer = inject("consumer");

describe("browser bundles of the installed package", () => {
  it("stay within their gzipped limits", async () => {
    const result = await run("npx", ["--no-install", "tsx", "scripts/bundle-size.ts", "--package", join(consumer, "node_modules/sessionkit")], REPO);
    console.log(result.stdout);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/SessionManager \+ indexedDbStorage +\|/);
    // With esbuild code splitting, the scanner and the archive code loaded with import() stay out of the first load.
    expect(result.stdout).toMatch(/split: SessionManager \+ indexedDbStorage, secrets scan lazy +\|.*PASS$/m);
    expect(result.stdout).toMatch(/split: SessionManager \+ indexedDbStorage, archives lazy +\|.*PASS$/m);
    expect(result.stdout).not.toContain("FAIL");
    expect(result.code).toBe(0);
  });
});
