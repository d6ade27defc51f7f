/**
 * The installed package's types as strict TypeScript consumers see them, with skipLibCheck off
 * (every .d.ts the imports reach is checked): every public subpath under NodeNext and Bundler
 * resolution with Node's and the DOM's types, the browser subpaths with no Node types at all, and
 * the root under the old node10 resolution.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { publicSpecifiers, run } from "./consumer.js";

const consumer = inject("consumer");

/** Subpaths a browser or Electron renderer imports: their types must not need @types/node. */
const BROWSER_SPECIFIERS = [
  "sessionkit",
  "sessionkit/adapter-kit",
  "sessionkit/secrets",
  // zip.js, hash-wasm, web streams and crypto.subtle; Node's codecs are in adapters/node-fs.
  "sessionkit/archives",
  "sessionkit/adapters/memory",
  "sessionkit/adapters/indexeddb",
  "sessionkit/adapters/opfs",
  "sessionkit/adapters/rpc",
  "sessionkit/adapters/http",
  "sessionkit/adapters/mounted",
  "sessionkit/adapters/browser-storage",
  "sessionkit/adapters/electron/renderer",
];

const STRICT = { strict: true, esModuleInterop: true, noEmit: true, skipLibCheck: false, target: "ES2022", noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true };

/** A module importing each specifier as a namespace, and using the application API's types. */
function importsOf(specifiers: readonly string[]): string {
  const lines = specifiers.map((specifier, i) => `import * as m${i} from "${specifier}";`);
  lines.push(`export const modules = [${specifiers.map((_, i) => `m${i}`).join(", ")}];`);
  lines.push(
    'import { SessionManager, isSessionError, type SessionContext, type StoragePort } from "sessionkit";',
    "export async function contextOf(storage: StoragePort, cwd: string): Promise<SessionContext> {",
    "  const session = await SessionManager.create(storage, cwd);",
    "  try { return session.buildSessionContext(); } catch (error) { if (isSessionError(error)) throw error; throw error; } finally { await session.close(); }",
    "}",
  );
  return `${lines.join("\n")}\n`;
}

async function typecheck(name: string, compilerOptions: Record<string, unknown>, source: string): Promise<{ code: number; output: string }> {
  const dir = join(consumer, `types-${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "index.ts"), source);
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["index.ts"] }, null, 2));
  const result = await run("npx", ["--no-install", "tsc", "-p", dir], consumer);
  return { code: result.code, output: result.stdout + result.stderr };
}

describe("the package's types in strict consumers (skipLibCheck: false)", () => {
  let everySpecifier: string[];
  beforeAll(async () => {
    everySpecifier = await publicSpecifiers(consumer);
  });

  it("lists the public subpaths the browser check names", () => {
    for (const specifier of BROWSER_SPECIFIERS) expect(everySpecifier).toContain(specifier);
  });

  it("every public subpath under NodeNext resolution", async () => {
    const options = { ...STRICT, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM", "DOM.Iterable"], types: ["node"] };
    expect(await typecheck("nodenext", options, importsOf(everySpecifier))).toEqual({ code: 0, output: "" });
  });

  it("every public subpath under Bundler resolution", async () => {
    const options = { ...STRICT, module: "ESNext", moduleResolution: "Bundler", lib: ["ES2023", "DOM", "DOM.Iterable"], types: ["node"] };
    expect(await typecheck("bundler", options, importsOf(everySpecifier))).toEqual({ code: 0, output: "" });
  });

  it("the browser subpaths with the DOM's types and no Node types", async () => {
    const options = { ...STRICT, module: "ESNext", moduleResolution: "Bundler", lib: ["ES2023", "DOM", "DOM.Iterable"], types: [] };
    expect(await typecheck("browser", options, importsOf(BROWSER_SPECIFIERS))).toEqual({ code: 0, output: "" });
  });

  it("every public subpath's types under node10 resolution (package.json's typesVersions)", async () => {
    const options = { ...STRICT, module: "CommonJS", moduleResolution: "node10", lib: ["ES2023", "DOM", "DOM.Iterable"], types: ["node"] };
    const source = everySpecifier.map((specifier, i) => `import type * as m${i} from "${specifier}";\nexport type T${i} = typeof m${i};`).join("\n");
    expect(await typecheck("node10", options, `${source}\n`)).toEqual({ code: 0, output: "" });
  });
});
