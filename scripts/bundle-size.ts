/**
 * What a browser app pays for sessionkit: each scenario is an entry that imports from the package
 * by name, bundled as an app's bundler would (esbuild: bundle, minify, ESM, browser, es2022) and
 * gzipped (level 9). Prints `scenario | minified KB | gzipped KB | limit | PASS/FAIL` (KB = 1,000
 * bytes; the limit is on the gzipped size) and exits 1 when a scenario is over its limit.
 *
 *   tsx scripts/bundle-size.ts --package <dir> [--json <file>] [--verbose]
 *
 * `--package` is an installed sessionkit: its package.json (`exports`) and built dist/, either the
 * packed tarball installed in a consumer project (node_modules/sessionkit) or this repository
 * after `npm run build` (`--package .`). Its dependencies resolve from where it is installed.
 * `--verbose` lists each bundle's biggest inputs.
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
    entry: `export { SessionManager, exportArchive, importArchive } from "sessionkit";\nexport { indexedDbStorage } from "sessionkit/adapters/indexeddb";\n`,
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
    pass: limitBytes === undefined || gzippedBytes <= limitBytes,
    inputs: inputsOf(result.metafile, packageDir),
  };
}

function inputsOf(metafile: Metafile, packageDir: string): { path: string; bytes: number }[] {
  const [output] = Object.values(metafile.outputs);
  return Object.entries(output!.inputs)
    .map(([path, { bytesInOutput }]) => ({ path: shortInputPath(path, packageDir), bytes: bytesInOutput }))
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

function printTable(rows: Measured[]): void {
  const table = [
    ["scenario", "minified KB", "gzipped KB", "limit", "result"],
    ...rows.map((row) => [row.scenario, kb(row.minifiedBytes), kb(row.gzippedBytes), row.limitBytes === null ? "-" : kb(row.limitBytes), row.limitBytes === null ? "-" : row.pass ? "PASS" : "FAIL"]),
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
} catch (error) {
  // A scenario that does not bundle (a subpath missing from the package, an unresolved import): esbuild's message says which.
  console.error((error as Error).message);
  process.exit(2);
}

printTable(rows);
if (values.verbose) printInputs(rows, 15);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(rows, null, 2)}\n`);
if (rows.some((row) => !row.pass)) process.exit(1);
