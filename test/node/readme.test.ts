/**
 * The README's TypeScript samples, as a user copies them: each ```ts block is type-checked and
 * run, importing "sessionkit" and its subpaths through package.json's `exports` (mapped to the
 * sources the build compiles). Each runs as a child process with $HOME in a temp dir, so a sample
 * that writes to "~/.pi/agent" writes there.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../shared/cli-runner.js";

interface Sample {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

function tsSamples(markdown: string): Sample[] {
  const samples: Sample[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```ts") continue;
    const end = lines.indexOf("```", i + 1);
    samples.push({ line: i + 1, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return samples;
}

/** "sessionkit" and "sessionkit/…" → the source file each `exports` entry is built from. */
async function sourceOfExports(): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { name: string; exports: Record<string, { default: string } | string> };
  const out: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string") continue; // "./package.json": no module
    const specifier = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    out[specifier] = join(REPO, target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"));
  }
  return out;
}

function run(file: string, home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: home, env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: "" } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

let tmp: string;
let samples: Sample[];
let exportsMap: Record<string, string>;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sessionkit-readme-"));
  samples = tsSamples(await readFile(join(REPO, "README.md"), "utf8"));
  exportsMap = await sourceOfExports();
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("README samples", () => {
  it("there are samples, and every one type-checks against the package's exports", async () => {
    expect(samples.length).toBeGreaterThanOrEqual(2);
    const files = await Promise.all(
      samples.map(async (sample) => {
        const file = join(tmp, `readme-line-${sample.line}.ts`);
        await writeFile(file, sample.code);
        return file;
      }),
    );
    const paths = Object.fromEntries(Object.entries(exportsMap).map(([specifier, source]) => [specifier, [source]]));
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      moduleDetection: ts.ModuleDetectionKind.Force,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
      types: ["node"],
      typeRoots: [join(REPO, "node_modules/@types")],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      paths,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${d.file.fileName.split("/").pop()}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : "";
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    expect(problems).toEqual([]);
  }, 120_000);

  it("every sample runs as written and exits 0; the library sample leaves one session in ~/.pi/agent", async () => {
    for (const sample of samples) {
      const home = await mkdtemp(join(tmp, `home-${sample.line}-`));
      const entry = join(home, "sample.ts");
      await writeFile(entry, sample.code);
      const bundle = join(home, "sample.mjs");
      await build({
        entryPoints: [entry],
        outfile: bundle,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        alias: exportsMap,
        // The package's own dependencies (pg), as an installed sessionkit would bring them.
        nodePaths: [join(REPO, "node_modules")],
        logLevel: "silent",
        // CommonJS dependencies (pg) require() Node's modules: give the ES module a real require.
        banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
        external: ["pg-native"],
      });
      const result = await run(bundle, home);
      expect(result, `README line ${sample.line}`).toMatchObject({ code: 0, stderr: "" });
      if (sample.code.includes('SessionManager.create(storage, "/home/me/app")')) {
        expect(result.stdout).toMatch(/^[0-9a-f]{8} 2 hi\n$/);
        expect(await readdir(join(home, ".pi/agent/sessions/--home-me-app--"))).toHaveLength(1);
      }
    }
  }, 120_000);
});
