/**
 * examples/electron as a user's app built from the installed package: copied out of the
 * repository (so `sessionkit/…` can only resolve to node_modules/sessionkit), type-checked strict
 * against the package's declarations, and bundled by its own build.ts. The `electron` package
 * cannot be installed here (it downloads its binary), so the example's stand-in types stay and the
 * app is not started; test/node/electron.test.ts runs the bridge across real thread boundaries.
 */
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build, transform } from "esbuild";
import { describe, expect, inject, it } from "vitest";
import { REPO, runOk } from "./consumer.js";

const consumer = inject("consumer");

describe("the Electron example, built from the package", () => {
  it("type-checks and bundles main, preload and page from node_modules/sessionkit", async () => {
    const app = join(consumer, "electron-example");
    await mkdir(app, { recursive: true });
    await cp(join(REPO, "examples/electron"), app, { recursive: true, filter: (source) => !source.includes("/dist") });
    await writeFile(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM"], types: ["node"] },
        include: ["*.ts"],
      }),
    );
    await runOk("npx", ["--no-install", "tsc", "-p", app], consumer);

    // build.ts as the README runs it (`npx tsx examples/electron/build.ts`), with its types stripped.
    const { code } = await transform(await readFile(join(app, "build.ts"), "utf8"), { loader: "ts", format: "esm", target: "node20" });
    await writeFile(join(app, "build.mjs"), code);
    await runOk("node", ["build.mjs"], app);
    for (const file of ["main.js", "preload.cjs", "renderer.js", "index.html"]) expect((await readFile(join(app, "dist", file))).length).toBeGreaterThan(0);

    // Every sessionkit module in the page's bundle came from the installed package.
    const page = await build({ entryPoints: [join(app, "renderer.ts")], bundle: true, write: false, metafile: true, minify: true, format: "esm", platform: "browser", absWorkingDir: app });
    const inputs = Object.keys(page.metafile.inputs);
    expect(inputs.filter((input) => input.includes("sessionkit/dist/")).length).toBeGreaterThan(5);
    // Paths are relative to the app; the consumer project's node_modules is one level up.
    expect(inputs.filter((input) => !input.startsWith("../node_modules/") && input !== "renderer.ts")).toEqual([]);
    const gzipped = gzipSync(page.outputFiles[0]!.contents, { level: 9 }).length;
    console.log(`electron example: page bundle ${(page.outputFiles[0]!.contents.length / 1024).toFixed(1)} KB minified, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  });
});
