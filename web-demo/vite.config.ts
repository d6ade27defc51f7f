/**
 * The viewer, built by `vite build web-demo` into web-demo/dist: the app (index.html, its
 * scripts and styles as files, a Content Security Policy in a meta tag forbidding inline and
 * remote script), and the export template (dist/export-template.html: the same viewer as one
 * file, script and style inline and allowed by their sha-256 in its own policy), which
 * `sessionkit export --html` and the viewer's "Export HTML" fill with a session. The template's
 * script is what the first screen needs; highlight.js is a block of its own that runs after the
 * first paint, when code is first highlighted (src/export/highlight-modules.ts).
 * `npx vite preview web-demo --port 4174 --strictPort --host 127.0.0.1` serves the build.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, defineConfig, type Plugin } from "vite";
import { appCsp, appCspHeader, cspHash, inlineScriptHashes } from "./app-csp.js";
import { HIGHLIGHT_BLOCK_ID } from "./src/export/highlight-modules.js";

const root = fileURLToPath(new URL(".", import.meta.url));
const cacheDir = fileURLToPath(new URL("../node_modules/.vite-viewer", import.meta.url));

/** Makes inline script text safe inside <script>: no "</script" or "<!--" can end or confuse the element. */
const inlineSafe = (code: string) => code.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");

/**
 * index.html's boot script (src/boot.ts, built as a classic script and put inline: it asks the
 * server for what the page shows while the app's files load) and its policy in a meta tag,
 * allowing the page's inline scripts by their hash. The script comes before the stylesheet: a
 * script after it would wait for it.
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
        return page.replace("<head>", () => `<head>\n    <meta http-equiv="Content-Security-Policy" content="${appCsp(inlineScriptHashes(page))}" />`);
      },
    },
  };
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
 * index.html preloads the serve mode's chunks (the app's, mostly shared with the static mode) before
 * the page's first script: main.ts imports them as it starts, and they load (and compile) beside
 * it instead of after it.
 */
function preloadApp(): Plugin {
  return {
    name: "sessionkit-preload-app",
    apply: "build",
    transformIndexHtml: {
      order: "post",
      handler(html, context) {
        const bundle = context.bundle;
        if (!bundle) return html;
        const entry = Object.values(bundle).find((output) => output.type === "chunk" && output.facadeModuleId === join(root, "src", "serve-mode.ts"));
        if (!entry) throw new Error("app build: no chunk for src/serve-mode.ts");
        const files = new Set<string>();
        const visit = (file: string) => {
          const chunk = bundle[file];
          if (files.has(file) || chunk?.type !== "chunk") return;
          files.add(file);
          for (const imported of chunk.imports) visit(imported);
        };
        visit(entry.fileName);
        // First in the head, the largest first: the serve mode's chunk is the last file the page
        // waits for, and a browser has 6 connections to a server for the page's 8 first requests.
        const size = (file: string) => (bundle[file]?.type === "chunk" ? (bundle[file] as { code: string }).code.length : 0);
        const tags = [...files]
          .filter((file) => !html.includes(file))
          .sort((a, b) => size(b) - size(a))
          .map((file) => ({ tag: "link", attrs: { rel: "modulepreload", crossorigin: true, href: `./${file}` }, injectTo: "head-prepend" as const }));
        return { html, tags };
      },
    },
  };
}

/**
 * The serve mode's first modules in one chunk: every module serve-mode.ts imports statically
 * (the app, marked, DOMPurify, zod, the HTTP port), less those of the page's first script. The
 * page asks its server for the stores and the session's first bytes as soon as that script runs;
 * a browser opens 6 connections to a server, and with the app in 11 files those requests waited
 * behind the files' (by ~400 ms on the bench machine). Returns the plugin that finds the modules
 * and the group that makes the chunk of them.
 */
function serveFirstChunk(): { plugin: Plugin; group: { name: string; test: (id: string) => boolean; includeDependenciesRecursively: boolean } } {
  const modules = new Set<string>();
  const plugin: Plugin = {
    name: "sessionkit-serve-first-chunk",
    apply: "build",
    buildEnd() {
      const reachable = (from: string) => {
        const seen = new Set<string>();
        const visit = (id: string) => {
          if (seen.has(id)) return;
          seen.add(id);
          for (const imported of this.getModuleInfo(id)?.importedIds ?? []) visit(imported);
        };
        visit(from);
        return seen;
      };
      const first = reachable(join(root, "src", "main.ts"));
      for (const id of reachable(join(root, "src", "serve-mode.ts"))) if (!first.has(id)) modules.add(id);
    },
  };
  return { plugin, group: { name: "serve-app", test: (id) => modules.has(id), includeDependenciesRecursively: false } };
}
const serveFirst = serveFirstChunk();

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
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", rolldownOptions: { output: { codeSplitting: { groups: [serveFirst.group] } } } },
  // The OPFS adapter starts a module worker that imports the rpc code: ES module output.
  worker: { format: "es" },
  plugins: [serveFirst.plugin, preloadApp(), appPage(), previewCsp(), exportTemplate()],
  server: { host: "127.0.0.1", port: 4174, strictPort: true },
  preview: { host: "127.0.0.1", port: 4174, strictPort: true },
});
