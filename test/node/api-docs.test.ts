/**
 * The API reference (`npm run docs`, typedoc.json): TypeDoc reads every public subpath and finds
 * nothing to warn about, so an export without a doc comment, a broken {@link} or an internal type
 * a public signature names fails here as it fails `npm run docs`. Only the check runs (no HTML is
 * written).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Application, Logger, LogLevel, TSConfigReader, TypeDocReader } from "typedoc";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Keeps TypeDoc's warnings and errors for the assertion instead of printing them. */
class CollectingLogger extends Logger {
  readonly problems: string[] = [];
  override log(message: string, level: LogLevel): void {
    if (level >= LogLevel.Warn) this.problems.push(`[${LogLevel[level]}] ${message}`);
  }
}

const packageJson = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  exports: Record<string, { default: string } | string>;
};
/** Each code subpath's import specifier and the source file it is built from ("src/index.ts"). */
const subpaths = Object.entries(packageJson.exports)
  .filter(([, target]) => typeof target !== "string")
  .map(([subpath, target]) => ({
    specifier: `${packageJson.name}${subpath.slice(1)}`,
    source: `${(target as { default: string }).default.replace(/^\.\/dist\//, "").replace(/\.js$/, "")}.ts`,
  }));

describe("API reference", () => {
  it("documents every export of every public subpath, each module named as it is imported, without a warning", async () => {
    // Only typedoc.json and the tsconfig it names: TypeDoc's default readers would also parse
    // vitest's command line as TypeDoc options.
    const app = await Application.bootstrapWithPlugins({ options: join(ROOT, "typedoc.json"), emit: "none" }, [new TypeDocReader(), new TSConfigReader()]);
    expect(app.logger.hasErrors() || app.logger.hasWarnings(), "typedoc.json is read without a warning").toBe(false);
    const logger = new CollectingLogger();
    app.logger = logger;

    const entryPoints = (app.options.getValue("entryPoints") as string[]).map((path) => path.slice(ROOT.length));
    expect(entryPoints.sort()).toEqual(subpaths.map(({ source }) => source).sort());

    const project = await app.convert();
    expect(project, logger.problems.join("\n")).toBeDefined();
    app.validate(project!);
    expect(logger.problems).toEqual([]);

    // The pages carry no source links (typedoc.json), so each entry file's own @module tag ties it to its name.
    expect(project!.children!.map((module) => module.name).sort()).toEqual(subpaths.map(({ specifier }) => specifier).sort());
    for (const { specifier, source } of subpaths) expect(await readFile(join(ROOT, source), "utf8"), source).toMatch(new RegExp(`@module ${specifier}\\n`));
  }, 120_000);
});
