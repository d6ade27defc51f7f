/**
 * The viewer, built by `vite build web-demo` into web-demo/dist: the app (index.html with its boot
 * script, entry and stylesheet inline, its other scripts as files, a Content Security Policy in a
 * meta tag allowing no inline script or style but those, by hash, and no remote one), and the
 * export template (dist/export-template.html: the same viewer as one
 * file, script and style inline and allowed by their sha-256 in its own policy), which
 * `sessionkit export --html` and the viewer's "Export HTML" fill with a session. The template's
 * script is what the first screen needs; highlight.js is a block of its own that runs after the
 * first paint, when code is first highlighted (src/export/highlight-modules.ts).
 * `npx vite preview web-demo --port 4174 --strictPort --host 127.0.0.1` serves the build.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { build, defineConfig, type Plugin, type Rollup } from "vite";
import { appCspHeader, appPageCsp, cspHash } from "./app-csp.js";
import { HIGHLIGHT_BLOCK_ID } from "./src/export/highlight-modules.js";

const root = fileURLToPath(new URL(".", import.meta.url));
const cacheDir = fileURLToPath(new URL("../node_modules/.vite-viewer", import.meta.url));

/** Makes inline script text safe inside <script>: no "</script" or "<!--" can end or confuse the element. */
const inlineSafe = (code: string) => code.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");

/**
 * index.html as served: its boot script (src/boot.ts, built as a classic script: it asks the server
 * for what the page shows while the app's chunk loads), its entry (main.ts's chunk, 1 KB) and its
 * stylesheet inline, and its policy in a meta tag allowing them by their hash. Before it can run,
 * the page then asks for one file, the app's chunk: each request more cost the browser, its network
 * service and the server CPU that a 2-core machine shares with the first render (the entry and the
 * stylesheet as files: the first entry 8 ms later, paired median of 40 pages). The boot script
 * comes before the stylesheet, as it did before a stylesheet link: a script after one waits for it.
 */
function appPage(): Plugin {
  let minify: boolean | "oxc" | "terser" | "esbuild" = true;
  return {
    name: "sessionkit-app-page",
    apply: "build",
    configResolved(config) {
      minify = config.build.minify;
    },
    transformIndexHtml: {
      order: "post",
      async handler(html) {
        const boot = inlineSafe((await classicScript(join(root, "src", "boot.ts"), minify)).trim());
        const page = html.replace(/\n\s*<link rel="stylesheet"/, (link) => `\n    <script>${boot}</script>${link}`);
        if (!page.includes(boot)) throw new Error("app build: no stylesheet link in index.html to put the boot script before");
        return page;
      },
    },
    // Last: the entry's code is final only once Vite has written its preloads into it.
    generateBundle: {
      order: "post",
      handler(_options, bundle) {
        const html = bundle["index.html"];
        const entry = Object.values(bundle).find((output) => output.type === "chunk" && output.isEntry && output.facadeModuleId === join(root, "index.html"));
        if (html?.type !== "asset" || typeof html.source !== "string" || entry?.type !== "chunk") throw new Error("app build: no index.html, or no entry chunk of it");
        const page = inlineStylesheet(inlineEntry(html.source, entry, bundle), bundle);
        html.source = page.replace("<head>", () => `<head>\n    <meta http-equiv="Content-Security-Policy" content="${appPageCsp(page)}" />`);
      },
    },
  };
}

/**
 * `page` with its entry chunk's code in place of the script tag that loads it, the chunk's file
 * left out of the build. The code names the files beside it (./app-….js); inline, a name is
 * resolved against the page, so each is named from there. Nothing may import the entry: a
 * module inline and one from its file would be two.
 */
function inlineEntry(page: string, entry: Rollup.OutputChunk, bundle: Rollup.OutputBundle): string {
  const importers = Object.values(bundle).filter((output) => output.type === "chunk" && (output.imports.includes(entry.fileName) || output.dynamicImports.includes(entry.fileName)));
  if (importers.length > 0) throw new Error(`app build: ${importers.map((output) => output.fileName).join(", ")} import(s) the entry ${entry.fileName}, which the page inlines`);
  const dir = `${posix.dirname(entry.fileName)}/`;
  let code = entry.code;
  for (const file of Object.keys(bundle)) {
    if (!file.startsWith(dir)) continue;
    const name = file.slice(dir.length);
    for (const quote of ['"', "'", "`"]) code = code.replaceAll(`${quote}./${name}${quote}`, `${quote}./${file}${quote}`);
  }
  const unplaced = [...code.matchAll(/["'`](\.\.?\/[^"'`]*)/g)].map((match) => match[1]!).filter((name) => !name.startsWith(`./${dir}`));
  if (unplaced.length > 0) throw new Error(`app build: the entry ${entry.fileName} names ${unplaced.join(", ")}, not files of this build`);
  if (code.includes("__VITE_")) throw new Error(`app build: the entry ${entry.fileName} still holds a placeholder of Vite's`);
  const tag = `<script type="module" crossorigin src="./${entry.fileName}"></script>`;
  if (!page.includes(tag)) throw new Error(`app build: no ${tag} in index.html`);
  delete bundle[entry.fileName];
  return page.replace(tag, () => `<script type="module">${inlineSafe(code)}</script>`);
}

/** `page` with its one stylesheet's text in place of its link (cssCodeSplit off: one for the app), the file left out of the build. */
function inlineStylesheet(page: string, bundle: Rollup.OutputBundle): string {
  const links = [...page.matchAll(/<link rel="stylesheet" crossorigin href="\.\/([^"]+)">/g)];
  const asset = links.length === 1 ? bundle[links[0]![1]!] : undefined;
  if (asset?.type !== "asset" || typeof asset.source !== "string") throw new Error(`app build: expected one stylesheet link in index.html, found ${links.length}`);
  const name = posix.basename(asset.fileName);
  const loaders = Object.values(bundle).filter((output) => output.type === "chunk" && output.code.includes(name));
  if (loaders.length > 0) throw new Error(`app build: ${loaders.map((output) => output.fileName).join(", ")} load(s) ${name}, which the page inlines`);
  delete bundle[asset.fileName];
  return page.replace(links[0]![0], () => `<style>${(asset.source as string).replace(/<\/(style)/gi, "<\\/$1")}</style>`);
}

/** `vite preview` sends the policy as `sessionkit serve` does: the built page's, as a header. */
function previewCsp(): Plugin {
  return {
    name: "sessionkit-preview-csp",
    async configurePreviewServer(server) {
      const header = appCspHeader(await readFile(join(server.config.build.outDir.startsWith("/") ? server.config.build.outDir : join(root, server.config.build.outDir), "index.html"), "utf8"));
      server.middlewares.use((_request, response, next) => {
        response.setHeader("Content-Security-Policy", header);
        next();
      });
    },
  };
}

/**
 * The page's first modules in one chunk, `app`: every module main.ts imports statically (the app
 * both modes share, the serve mode, marked, zod, the HTTP port), which index.html
 * preloads beside its entry. The page asks its server for the stores and the session's first bytes
 * as soon as its boot script runs; a browser opens 6 connections to a server, and with the app in
 * 11 files those requests waited behind the files' (by ~400 ms on the bench machine). In 4 files
 * (entry, serve mode, app, loader helper) each connection and request still cost CPU that a 2-core
 * machine shares with the first render: in one, the first entry came 4 ms sooner (paired median of
 * 24 pages). Returns the plugin that finds the modules and the group that makes the chunk of them.
 */
function appChunk(): { plugin: Plugin; group: { name: string; test: (id: string) => boolean; includeDependenciesRecursively: boolean } } {
  const modules = new Set<string>();
  const plugin: Plugin = {
    name: "sessionkit-app-chunk",
    apply: "build",
    buildEnd() {
      const visit = (id: string) => {
        if (modules.has(id)) return;
        modules.add(id);
        for (const imported of this.getModuleInfo(id)?.importedIds ?? []) visit(imported);
      };
      // Not main.ts itself: its top-level await takes the static mode's chunk, which imports this
      // one; in here, it would wait for itself.
      const main = join(root, "src", "main.ts");
      for (const imported of this.getModuleInfo(main)?.importedIds ?? []) visit(imported);
    },
  };
  return { plugin, group: { name: "app", test: (id) => modules.has(id), includeDependenciesRecursively: false } };
}
const firstChunk = appChunk();

/** In the export build: the export's highlight.js loader (a block of the page) in place of the app's (chunks). */
function exportHighlighter(): Plugin {
  const appModules = join(root, "src", "render", "highlight-modules.ts");
  return {
    name: "sessionkit-export-highlighter",
    enforce: "pre",
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved?.id === appModules ? join(root, "src", "export", "highlight-modules.ts") : null;
    },
  };
}

/** One script built from `entry` (its dynamic imports inlined) as the text of a classic script. */
async function classicScript(entry: string, minify: boolean | "oxc" | "terser" | "esbuild"): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), "sessionkit-export-block-"));
  try {
    await build({
      configFile: false,
      root,
      cacheDir,
      logLevel: "warn",
      build: {
        outDir: out,
        emptyOutDir: true,
        target: "es2022",
        minify,
        lib: { entry, formats: ["iife"], name: "sessionkitBlock", fileName: () => "block.js" },
        rolldownOptions: { output: { codeSplitting: false } },
      },
    });
    return await readFile(join(out, "block.js"), "utf8");
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** After the app build: the export build (one script, one stylesheet), inlined into one HTML file. */
function exportTemplate(): Plugin {
  let outDir = join(root, "dist");
  let minify: boolean | "oxc" | "terser" | "esbuild" = true;
  return {
    name: "sessionkit-export-template",
    apply: "build",
    configResolved(config) {
      outDir = config.build.outDir.startsWith("/") ? config.build.outDir : join(root, config.build.outDir);
      // As the app build (bench/browser/viewer-profile.ts builds unminified for readable profiles).
      minify = config.build.minify;
    },
    async closeBundle() {
      const out = await mkdtemp(join(tmpdir(), "sessionkit-export-build-"));
      try {
        await build({
          configFile: false,
          root,
          base: "./",
          cacheDir,
          logLevel: "warn",
          plugins: [exportHighlighter()],
          build: {
            outDir: out,
            emptyOutDir: true,
            target: "es2022",
            minify,
            modulePreload: false,
            cssCodeSplit: false,
            assetsInlineLimit: Number.MAX_SAFE_INTEGER,
            // One file by design (the viewer and its libraries): no chunk to split off.
            chunkSizeWarningLimit: 4096,
            rolldownOptions: { input: join(root, "export.html"), output: { codeSplitting: false } },
          },
        });
        const assets = join(out, "assets");
        const files = await readdir(assets);
        const js = files.filter((f) => f.endsWith(".js"));
        const css = files.filter((f) => f.endsWith(".css"));
        if (js.length !== 1 || css.length !== 1) throw new Error(`export build: expected one script and one stylesheet, got ${files.join(", ")}`);
        const script = inlineSafe(await readFile(join(assets, js[0]!), "utf8"));
        const style = (await readFile(join(assets, css[0]!), "utf8")).replace(/<\/(style)/gi, "<\\/$1");
        const highlighter = inlineSafe(await classicScript(join(root, "src", "export", "highlight-bundle.ts"), minify));
        const csp = [
          "default-src 'none'",
          `script-src ${cspHash(script)} ${cspHash(highlighter)}`,
          `style-src ${cspHash(style)}`,
          "img-src data: blob:",
          "object-src 'none'",
          "base-uri 'none'",
          "form-action 'none'",
        ].join("; ");
        let html = await readFile(join(out, "export.html"), "utf8");
        html = html
          .replace(/<script type="module" crossorigin src="[^"]+"><\/script>/, "")
          .replace(/<link rel="stylesheet" crossorigin href="[^"]+">/, "")
          .replace("<head>", () => `<head>\n    <meta http-equiv="Content-Security-Policy" content="${csp}" />`)
          .replace("</head>", () => `<style>${style}</style>\n  </head>`)
          .replace("</body>", () => `<script type="module">${script}</script>\n<script type="text/x-sessionkit-deferred" id="${HIGHLIGHT_BLOCK_ID}">${highlighter}</script>\n  </body>`);
        if (!html.includes("<!--sessionkit:data-->")) throw new Error("export build: the data marker is gone from export.html");
        if (/<script[^>]+src=|<link[^>]+stylesheet/.test(html)) throw new Error("export build: a script or stylesheet is still external");
        await writeFile(join(outDir, "export-template.html"), html);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  };
}

export default defineConfig({
  root,
  // Relative asset URLs: the built viewer works from any path it is served under.
  base: "./",
  // Its own cache: never share pre-bundled deps with vitest or the e2e test page.
  cacheDir,
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // One stylesheet, inline in the page (appPage): no chunk loads one of its own.
    cssCodeSplit: false,
    // Every browser the app targets preloads modules itself.
    modulePreload: { polyfill: false },
    rolldownOptions: { output: { codeSplitting: { groups: [firstChunk.group] } } },
  },
  // The OPFS adapter starts a module worker that imports the rpc code: ES module output.
  worker: { format: "es" },
  plugins: [firstChunk.plugin, appPage(), previewCsp(), exportTemplate()],
  server: { host: "127.0.0.1", port: 4174, strictPort: true },
  preview: { host: "127.0.0.1", port: 4174, strictPort: true },
});
