/**
 * The layering rule of docs/DESIGN.md §1, and no circles, checked on the import graph by
 * dependency-cruiser (`npm run lint:deps`). Type-only imports count: a layer that names another's
 * types depends on it.
 *
 * Circles that exist today are listed in .dependency-cruiser-known-violations.json: `lint:deps`
 * passes over those and fails on any other. Once one is broken, regenerate that file with
 * `npm run lint:deps:baseline` so that it cannot come back.
 */

/** Libraries that run unchanged in Node and browsers: the only ones the core may import. */
const UNIVERSAL_LIBRARIES = "^node_modules/(zod|@zip\\.js/zip\\.js|hash-wasm|@sqlite\\.org/sqlite-wasm)/";
/** The folders that are not part of the package: tests, tools, examples. */
const NOT_SHIPPED = "^(test|e2e|bench|scripts|examples)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A circle of modules cannot be read, tested or split one module at a time.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-depends-on-no-other-layer",
      comment: "The core (src/) depends only on its own modules and the StoragePort interface (DESIGN.md §1).",
      severity: "error",
      from: { path: "^src/" },
      to: { path: ["^(adapters|cli|web-demo)/", NOT_SHIPPED] },
    },
    {
      name: "core-uses-no-node-builtins",
      comment: "The core runs in browsers too: no node: modules.",
      severity: "error",
      from: { path: "^src/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "core-uses-only-universal-libraries",
      comment: "The core imports only libraries that run unchanged in Node and browsers (the browser tests run it on each).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/testing/" },
      to: { path: "^node_modules/", pathNot: UNIVERSAL_LIBRARIES },
    },
    {
      name: "testing-uses-only-vitest-and-universal-libraries",
      comment: "sessionkit/testing registers vitest tests: vitest, an optional peer dependency, is for it alone.",
      severity: "error",
      from: { path: "^src/testing/" },
      to: { path: "^node_modules/", pathNot: [UNIVERSAL_LIBRARIES, "^node_modules/(vitest|@vitest)/"] },
    },
    {
      name: "adapters-use-only-the-port-of-the-core",
      comment: "An adapter implements StoragePort and needs nothing else of the core: src/port.ts (or src/adapter-kit.ts, which re-exports it).",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^src/", pathNot: "^src/(port|adapter-kit)\\.ts$" },
    },
    {
      name: "adapters-depend-on-no-composing-layer",
      comment: "Adapters are composed by cli/ and web-demo/, never the other way round.",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: ["^(cli|web-demo)/", NOT_SHIPPED] },
    },
    {
      name: "adapter-kit-stands-alone",
      comment: "adapters/kit/ holds what several adapters share: it builds on the port alone, never on one adapter.",
      severity: "error",
      from: { path: "^adapters/kit/" },
      to: { path: "^adapters/", pathNot: "^adapters/kit/" },
    },
    {
      name: "viewer-depends-on-no-cli",
      comment: "The viewer runs in a page: it composes the core and the browser adapters, not the CLI or Node.",
      severity: "error",
      from: { path: "^web-demo/src/" },
      to: { path: ["^cli/", NOT_SHIPPED] },
    },
    {
      name: "viewer-uses-no-node-builtins",
      comment: "The viewer runs in a page: no node: modules.",
      severity: "error",
      from: { path: "^web-demo/src/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "shipped-code-depends-on-no-tests-or-tools",
      comment: "What the package ships (src/, adapters/, cli/, web-demo/) imports nothing from tests, benchmarks, scripts or examples.",
      severity: "error",
      from: { path: "^(src|adapters|cli|web-demo)/" },
      to: { path: NOT_SHIPPED },
    },
    {
      name: "shipped-library-uses-no-dev-dependencies",
      comment: "dist/src and dist/adapters import their libraries at the user's: a devDependency would be missing there (peer dependencies such as pg and vitest are the user's to install).",
      severity: "error",
      // adapters/server (the HTTP server, which needs ws) is no public subpath: only the CLI's bundle, tests, the bench and e2e use it.
      from: { path: "^(src|adapters)/", pathNot: "^adapters/server/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["npm-peer"] },
    },
    {
      name: "scripts-and-bench-are-separate-tools",
      comment: "A script and the benchmark each stand alone: what both need belongs in the package or in test/shared/.",
      severity: "error",
      from: { path: "^scripts/" },
      to: { path: "^bench/" },
    },
    {
      name: "no-unresolvable-imports",
      comment: "Every import resolves to a file or a package (Vite's ?raw imports are the bundler's; the Electron example declares electron's types itself, examples/electron/electron.d.ts).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: ["\\?raw$", "^electron$"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Build output (what the cruise starts from; a package's own dist/ folder in node_modules is
    // kept), and the benches' data, which holds the viewer builds they measure.
    exclude: { path: "^((web-demo/|examples/electron/)?dist/|bench/\\.data/)" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: {
      dot: {
        // The graph of docs/structure-*.svg (npm run structure:svg): one node per part of a layer,
        // src/<module>, adapters/<adapter>, cli, web-demo/src/<dir> (its top-level files as one).
        collapsePattern: ["^src/[^/]+\\.ts$", "^src/[^/]+", "^adapters/[^/]+\\.ts$", "^adapters/[^/]+", "^cli", "^web-demo/src/(?![^/]+$)[^/]+", "^web-demo/src/", "^web-demo/[^/]+\\.ts$"],
        theme: {
          graph: { rankdir: "LR", splines: "true", ranksep: "1.2", nodesep: "0.25", fontname: "Helvetica", fontsize: "12" },
          node: { fontname: "Helvetica", fontsize: "11" },
          edge: { color: "#00000055", penwidth: "1" },
          modules: [{ criteria: { source: "^web-demo/src/$" }, attributes: { label: "src/*.ts", tooltip: "web-demo/src/*.ts: the entry points and modes" } }],
        },
      },
    },
  },
};
