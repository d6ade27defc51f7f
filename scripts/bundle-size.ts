/**
 * What a browser app pays for sessionkit: each scenario is an entry that imports from the package
 * by name, bundled as an app's bundler would (esbuild: bundle, minify, ESM, browser, es2022) and
 * gzipped (level 9). Prints `scenario | minified KB | gzipped KB | limit | PASS/FAIL` (KB = 1,000
 * bytes; the limit is on the gzipped size) and exits 1 when a scenario is over its limit or a
 * checked split scenario (below) loads the feature's code first.
 *
 *   tsx scripts/bundle-size.ts --package <dir> [--json <file>] [--verbose]
 *
 * `--package` is an installed sessionkit: its package.json (`exports`) and built dist/, either the
 * packed tarball installed in a consumer project (node_modules/sessionkit) or this repository
 * after `npm run build` (`--package .`). Its dependencies resolve from where it is installed.
 * `--verbose` lists each bundle's biggest inputs.
 *
 * The split scenarios build an app as one with code splitting does (esbuild `splitting: true`): an
 * entry that uses SessionManager and loads a feature with `import()`. What the page loads before
 * that import runs is the entry and the chunks it imports statically; those are measured, and the
 * feature's code found in them is listed (and fails the checked scenarios). esbuild assigns whole files to chunks, and a
 * file reached from an entry through any static import goes with that entry, used or not (its
 * tree shaking within a file is per build, not per entry: evanw/esbuild#3531). So a module the
 * root `sessionkit` imports statically lands in every app's first load once anything uses it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build, type Metafile, type Plugin } from "esbuild";

const KB = 1000;
const PACKAGE_NAME = "sessionkit";

interface Scenario {
  name: string;
  /** The entry's source; its exports keep what it imports in the bundle. */
  entry: string;
  /** Most gzipped bytes; undefined: measured and reported only. */
  limitBytes?: number;
}

const SCENARIOS: Scenario[] = [
  {
    name: "SessionManager + indexedDbStorage",
    entry: `export { SessionManager } from "sessionkit";\nexport { indexedDbStorage } from "sessionkit/adapters/indexeddb";\n`,
    limitBytes: 35 * KB,
  },
  {
    name: "SessionManager + opfsStorage",
    entry: `export { SessionManager } from "sessionkit";\nexport { opfsStorage } from "sessionkit/adapters/opfs";\n`,
    limitBytes: 35 * KB,
  },
  {
    name: "SessionManager + electronStorage (renderer)",
    entry: `export { SessionManager } from "sessionkit";\nexport { electronStorage } from "sessionkit/adapters/electron/renderer";\n`,
    limitBytes: 35 * KB,
  },
  {
    name: "SessionManager + indexedDbStorage + archives",
    entry: `export { SessionManager } from "sessionkit";\nexport { exportArchive, importArchive } from "sessionkit/archives";\nexport { indexedDbStorage } from "sessionkit/adapters/indexeddb";\n`,
  },
];

interface SplitScenario {
  name: string;
  /** The app's entry; it loads `./feature.js` with `import()`. */
  app: string;
  /** The lazily loaded module. */
  feature: string;
  /** The feature's own inputs, as `shortInputPath` names them. */
  featureOnly: RegExp;
  /** Whether the feature's code in the first load fails the run; otherwise it is reported only. */
  leakFails: boolean;
}

const SM_APP = `import { SessionManager } from "sessionkit";\nimport { indexedDbStorage } from "sessionkit/adapters/indexeddb";\nexport const open = (cwd) => SessionManager.create(indexedDbStorage(), cwd);\nexport const feature = () => import("./feature.js");\n`;

const SPLIT_SCENARIOS: SplitScenario[] = [
  {
    name: "split: SessionManager + indexedDbStorage, secrets scan lazy",
    app: SM_APP,
    feature: `export { scanSessions, findSecrets, redactRecord } from "sessionkit/secrets";\n`,
    featureOnly: /^sessionkit: dist\/src\/secrets\//,
    leakFails: true,
  },
  {
    name: "split: SessionManager + indexedDbStorage, archives lazy",
    app: SM_APP,
    feature: `export { exportArchive, importArchive } from "sessionkit/archives";\n`,
    // The root module keeps the archive errors and limits (errors.js, limits.js): they may load first.
    featureOnly: /^(sessionkit: dist\/src\/archive\/(?!(errors|limits)\.js$)|node_modules\/@zip\.js\/|node_modules\/hash-wasm\/)/,
    leakFails: true,
  },
  {
    name: "split: SessionManager + indexedDbStorage, search lazy",
    app: SM_APP,
    feature: `export { searchSessions } from "sessionkit";\n`,
    featureOnly: /^(sessionkit: dist\/src\/search\/|node_modules\/@sqlite\.org\/)/,
    // Search is in the root module (the package's subpath scheme), so esbuild loads it first.
    // SQLite itself is an import() of its own.
    leakFails: false,
  },
];

/** opfsStorage starts this file as a module worker; a bundler emits it as a chunk of its own. */
const OPFS_WORKER = { name: "OPFS worker (separate file)", file: "dist/adapters/opfs/sessionkit-opfs-worker.js" };

type ExportTarget = string | null | { [condition: string]: ExportTarget } | ExportTarget[];

/** The file an `exports` target names under the conditions a browser ESM bundle resolves with. */
function pickTarget(target: ExportTarget | undefined): string | undefined {
  if (target === undefined || target === null) return undefined;
  if (typeof target === "string") return target;
  if (Array.isArray(target)) return target.map(pickTarget).find((file) => file !== undefined);
  for (const [condition, next] of Object.entries(target)) {
    if (["browser", "import", "module", "default"].includes(condition)) {
      const file = pickTarget(next);
      if (file !== undefined) return file;
    }
  }
  return undefined;
}

/** Resolves `sessionkit` and `sessionkit/<subpath>` to the files of the package in `packageDir`. */
function packagePlugin(packageDir: string): Plugin {
  const exportsMap = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { exports?: Record<string, ExportTarget> }).exports ?? {};
  return {
    name: "sessionkit-package",
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${PACKAGE_NAME}(/.*)?$`) }, (args) => {
        const subpath = `.${args.path.slice(PACKAGE_NAME.length)}`;
        const exported = pickTarget(exportsMap[subpath]);
        if (exported === undefined) return { errors: [{ text: `${args.path}: not in ${join(packageDir, "package.json")}'s exports` }] };
        return { path: join(packageDir, exported) };
      });
    },
  };
}

interface Measured {
  scenario: string;
  minifiedBytes: number;
  gzippedBytes: number;
  limitBytes: number | null;
  /** What decides `pass`: a gzipped limit, the feature's code in the first load, or nothing. */
  check: "limit" | "leaks" | "none";
  /** Split scenarios: the feature's code found in the app's first load, per folder or package. */
  leaked: { part: string; bytes: number }[];
  pass: boolean;
  /** Bytes each input contributes to the minified bundle, biggest first. */
  inputs: { path: string; bytes: number }[];
}

async function measure(name: string, entry: { contents: string } | { file: string }, packageDir: string, limitBytes: number | undefined): Promise<Measured> {
  const result = await build({
    ...("file" in entry ? { entryPoints: [entry.file] } : { stdin: { contents: entry.contents, resolveDir: packageDir, sourcefile: "entry.js", loader: "js" as const } }),
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    outfile: "bundle.js",
    metafile: true,
    logLevel: "silent",
    plugins: [packagePlugin(packageDir)],
  });
  const code = result.outputFiles[0]!.contents;
  const gzippedBytes = gzipSync(code, { level: 9 }).length;
  return {
    scenario: name,
    minifiedBytes: code.length,
    gzippedBytes,
    limitBytes: limitBytes ?? null,
    check: limitBytes === undefined ? "none" : "limit",
    leaked: [],
    pass: limitBytes === undefined || gzippedBytes <= limitBytes,
    inputs: inputsOf(Object.values(result.metafile.outputs), packageDir),
  };
}

const VIRTUAL = "scenario";

/** Serves the scenario's `app.js` and `feature.js` from memory. */
function virtualFilesPlugin(files: Record<string, string>, packageDir: string): Plugin {
  return {
    name: "scenario-files",
    setup(build) {
      build.onResolve({ filter: /^(\.\/)?(app|feature)\.js$/ }, (args) => ({ path: args.path.replace(/^\.\//, ""), namespace: VIRTUAL }));
      build.onLoad({ filter: /.*/, namespace: VIRTUAL }, (args) => ({ contents: files[args.path], loader: "js", resolveDir: packageDir }));
    },
  };
}

/** The app's first load under code splitting: its entry chunk and every chunk it imports statically. */
async function measureSplit(scenario: SplitScenario, packageDir: string): Promise<Measured> {
  const result = await build({
    entryPoints: ["app.js"],
    bundle: true,
    splitting: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    outdir: "out",
    metafile: true,
    logLevel: "silent",
    plugins: [virtualFilesPlugin({ "app.js": scenario.app, "feature.js": scenario.feature }, packageDir), packagePlugin(packageDir)],
  });
  const outputs = result.metafile.outputs;
  const appOutput = Object.keys(outputs).find((path) => outputs[path]!.entryPoint === `${VIRTUAL}:app.js`)!;
  const firstLoad = new Set<string>();
  const visit = (path: string) => {
    if (firstLoad.has(path)) return;
    firstLoad.add(path);
    for (const imported of outputs[path]!.imports) if (imported.kind === "import-statement") visit(imported.path);
  };
  visit(appOutput);
  const files = result.outputFiles.filter((file) => firstLoad.has(relative(process.cwd(), file.path)));
  if (files.length !== firstLoad.size) throw new Error(`${scenario.name}: ${firstLoad.size} chunks in the metafile, ${files.length} written`);
  // Each chunk is a request of its own, compressed on its own.
  const minifiedBytes = files.reduce((sum, file) => sum + file.contents.length, 0);
  const gzippedBytes = files.reduce((sum, file) => sum + gzipSync(file.contents, { level: 9 }).length, 0);
  const inputs = inputsOf([...firstLoad].map((path) => outputs[path]!), packageDir);
  const leaked = partsOf(inputs.filter((input) => scenario.featureOnly.test(input.path)));
  return {
    scenario: scenario.name,
    minifiedBytes,
    gzippedBytes,
    limitBytes: null,
    check: scenario.leakFails ? "leaks" : "none",
    leaked,
    pass: !scenario.leakFails || leaked.length === 0,
    inputs,
  };
}

/** Inputs summed per folder of the package (`sessionkit: dist/src/archive/`) or per dependency (`@zip.js/zip.js`). */
function partsOf(inputs: { path: string; bytes: number }[]): { part: string; bytes: number }[] {
  const parts = new Map<string, number>();
  for (const { path, bytes } of inputs) {
    const part = /^sessionkit: (?:[^/]+\/)*/.exec(path)?.[0] ?? /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path;
    parts.set(part, (parts.get(part) ?? 0) + bytes);
  }
  return [...parts].map(([part, bytes]) => ({ part, bytes })).sort((a, b) => b.bytes - a.bytes);
}

function inputsOf(outputs: Metafile["outputs"][string][], packageDir: string): { path: string; bytes: number }[] {
  const bytes = new Map<string, number>();
  for (const output of outputs) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = shortInputPath(path, packageDir);
      bytes.set(name, (bytes.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...bytes]
    .map(([path, inputBytes]) => ({ path, bytes: inputBytes }))
    .filter((input) => input.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}

/** An input as `sessionkit: dist/...` for the package's own files and from node_modules/ for its dependencies. */
function shortInputPath(path: string, packageDir: string): string {
  const absolute = resolve(path);
  const own = relative(packageDir, absolute);
  if (!own.startsWith("..") && !own.includes("node_modules")) return `${PACKAGE_NAME}: ${own}`;
  const modules = absolute.lastIndexOf(`${sep}node_modules${sep}`);
  return modules >= 0 ? absolute.slice(modules + 1) : path;
}

const kb = (bytes: number) => (bytes / KB).toFixed(1);

function resultOf(row: Measured): string {
  if (row.check !== "none") return row.pass ? "PASS" : "FAIL";
  return row.leaked.length > 0 ? "leaks" : "-";
}

function printTable(rows: Measured[]): void {
  const table = [
    ["scenario", "minified KB", "gzipped KB", "limit", "result"],
    ...rows.map((row) => [row.scenario, kb(row.minifiedBytes), kb(row.gzippedBytes), row.limitBytes === null ? "-" : kb(row.limitBytes), resultOf(row)]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
  for (const [i, cells] of table.entries()) {
    console.log(cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(" | "));
    if (i === 0) console.log(widths.map((width) => "-".repeat(width)).join("-|-"));
  }
}

function printInputs(rows: Measured[], top: number): void {
  for (const row of rows) {
    console.log(`\n${row.scenario}: biggest inputs (minified bytes in the bundle)`);
    for (const input of row.inputs.slice(0, top)) console.log(`  ${String(input.bytes).padStart(8)}  ${input.path}`);
    if (row.inputs.length > top) console.log(`  ${String(row.inputs.slice(top).reduce((sum, input) => sum + input.bytes, 0)).padStart(8)}  (${row.inputs.length - top} more)`);
  }
}

const { values } = parseArgs({ options: { package: { type: "string" }, json: { type: "string" }, verbose: { type: "boolean", default: false } } });
if (values.package === undefined) {
  console.error("usage: tsx scripts/bundle-size.ts --package <dir of an installed sessionkit> [--json <file>] [--verbose]");
  process.exit(2);
}
const packageDir = resolve(values.package);

const rows: Measured[] = [];
try {
  for (const scenario of SCENARIOS) rows.push(await measure(scenario.name, { contents: scenario.entry }, packageDir, scenario.limitBytes));
  rows.push(await measure(OPFS_WORKER.name, { file: join(packageDir, OPFS_WORKER.file) }, packageDir, undefined));
  for (const scenario of SPLIT_SCENARIOS) rows.push(await measureSplit(scenario, packageDir));
} catch (error) {
  // A scenario that does not bundle (a subpath missing from the package, an unresolved import): esbuild's message says which.
  console.error((error as Error).message);
  process.exit(2);
}

printTable(rows);
for (const row of rows.filter((row) => row.leaked.length > 0)) {
  const parts = row.leaked.map(({ part, bytes }) => `${part} ${kb(bytes)} KB`).join(", ");
  console.log(`\n${row.scenario}: the feature's code in the first load (minified): ${parts}`);
}
if (values.verbose) printInputs(rows, 15);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(rows, null, 2)}\n`);
if (rows.some((row) => !row.pass)) process.exit(1);
