/**
 * The installed package in Node: the README's Node quick start runs as a user's ES module,
 * `sessionkit/secrets` scans and redacts, `sessionkit/archives` exports, verifies and imports, and
 * `npx sessionkit` serves the viewer and writes an HTML export, as from the repository.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transform } from "esbuild";
import { describe, expect, inject, it } from "vitest";
import { REPO, runOk } from "./consumer.js";

const consumer = inject("consumer");

/** The README's first ```ts sample that uses the node-fs adapter. */
async function readmeNodeSample(): Promise<string> {
  const readme = await readFile(join(REPO, "README.md"), "utf8");
  const samples = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
  const sample = samples.find((code) => code.includes('"sessionkit/adapters/node-fs"'));
  if (!sample) throw new Error("README.md has no ```ts sample importing sessionkit/adapters/node-fs");
  return sample;
}

/** A pi session file of the corpus, stored under `root` as pi lays it out. */
async function storeWithOneSession(): Promise<{ root: string; id: string }> {
  const root = await mkdtemp(join(tmpdir(), "sessionkit-consumer-store-"));
  const corpus = join(REPO, "test/fixtures/corpus/badlogic__pi-mono");
  const file = (await readdir(corpus)).find((name) => name.endsWith(".jsonl"))!;
  const dir = join(root, "sessions", "--home-user-project--");
  await mkdir(dir, { recursive: true });
  await copyFile(join(corpus, file), join(dir, file));
  const header = JSON.parse((await readFile(join(dir, file), "utf8")).split("\n", 1)[0]!) as { id: string };
  return { root, id: header.id };
}

describe("the package in Node", () => {
  it("runs the README's Node sample as an ES module", async () => {
    const { code } = await transform(await readmeNodeSample(), { loader: "ts", format: "esm", target: "node20" });
    const dir = join(consumer, "readme-sample");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "sample.mjs"), code);
    const home = await mkdtemp(join(tmpdir(), "sessionkit-consumer-home-"));
    const result = await runOk("node", ["sample.mjs"], dir, { HOME: home, PI_CODING_AGENT_DIR: "" });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toMatch(/^[0-9a-f]{8} 2 hi$/);
    const projects = await readdir(join(home, ".pi/agent/sessions"));
    expect(projects).toHaveLength(1);
  });

  it("sessionkit/secrets finds and redacts a secret; the root module leaves the scanner out", async () => {
    const dir = join(consumer, "secrets-subpath");
    await mkdir(dir, { recursive: true });
    const entry = { type: "message", id: "a1b2c3d4", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: [{ type: "text", text: "export STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc" }] } };
    await writeFile(
      join(dir, "secrets.mjs"),
      [
        'import { findSecrets, redactRecord } from "sessionkit/secrets";',
        'import * as root from "sessionkit";',
        `const entry = ${JSON.stringify(entry)};`,
        "const counts = {};",
        "const redacted = redactRecord(entry, counts).message.content[0].text;",
        'console.log(JSON.stringify({ kinds: findSecrets(entry.message.content[0].text).map((match) => match.kind), redacted, counts, rootHasScanner: "findSecrets" in root }));',
      ].join("\n"),
    );
    const result = await runOk("node", ["secrets.mjs"], dir);
    expect(JSON.parse(result.stdout)).toEqual({
      kinds: ["stripe-access-token"],
      redacted: "export STRIPE_KEY=[REDACTED:stripe-access-token]",
      counts: { "stripe-access-token": 1 },
      rootHasScanner: false,
    });
  });

  it("sessionkit/archives exports, verifies and imports a session; its errors are the root's ArchiveError; the root leaves the functions out", async () => {
    const { root: store, id } = await storeWithOneSession();
    const projectDir = join(store, "sessions", "--home-user-project--");
    const [file] = await readdir(projectDir);
    const dir = join(consumer, "archives-subpath");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "archives.mjs"),
      [
        'import { exportArchive, importArchive, verifyArchive } from "sessionkit/archives";',
        'import * as root from "sessionkit";',
        'import { memoryStorage } from "sessionkit/adapters/memory";',
        'import { nodeFsStorage } from "sessionkit/adapters/node-fs";',
        "const [storeRoot, path] = process.argv.slice(2);",
        "const chunks = [];",
        "const exported = await exportArchive(nodeFsStorage({ root: storeRoot }), [path], new WritableStream({ write: (chunk) => void chunks.push(chunk.slice()) }));",
        "const zip = new Blob(chunks);",
        "const verified = await verifyArchive(zip);",
        "const imported = await importArchive(memoryStorage(), zip);",
        "const refused = await importArchive(memoryStorage(), new TextEncoder().encode(\"not a zip\")).catch((error) => error);",
        "console.log(JSON.stringify({",
        "  exported: exported.sessions.map((session) => session.id),",
        "  verified: verified.sessions.map((session) => session.id),",
        "  imported: imported.sessions.map((session) => [session.id, session.action]),",
        "  refused: [refused instanceof root.ArchiveError, root.isArchiveError(refused), refused.code],",
        '  inRoot: ["exportArchive", "importArchive", "importSessionFiles", "verifyArchive"].filter((name) => name in root),',
        "}));",
      ].join("\n"),
    );
    const result = await runOk("node", ["archives.mjs", store, `sessions/--home-user-project--/${file}`], dir);
    expect(JSON.parse(result.stdout)).toEqual({
      exported: [id],
      verified: [id],
      imported: [[id, "created"]],
      refused: [true, true, "not-a-zip"],
      inRoot: [],
    });
  });

  it("npx sessionkit --help and ls work from the installed bin", async () => {
    const help = await runOk("npx", ["--no-install", "sessionkit", "--help"], consumer);
    expect(help.stdout).toContain("Usage: sessionkit");
    const { root } = await storeWithOneSession();
    const ls = await runOk("npx", ["--no-install", "sessionkit", "--root", root, "ls", "--all", "--json"], consumer);
    expect(JSON.parse(ls.stdout)).toHaveLength(1);
  });

  it("npx sessionkit export --html writes a page holding the session", async () => {
    const { root, id } = await storeWithOneSession();
    const out = join(await mkdtemp(join(tmpdir(), "sessionkit-consumer-html-")), "session.html");
    await runOk("npx", ["--no-install", "sessionkit", "--root", root, "export", id.slice(0, 8), "--html", "-o", out], consumer);
    const html = await readFile(out, "utf8");
    expect(html).toContain("<title>");
    expect(html).toContain(id);
    expect((await stat(out)).size).toBeGreaterThan(100_000);
  });

  it("npx sessionkit serve shows the viewer and lists the store", async () => {
    const { root } = await storeWithOneSession();
    const server = spawn("npx", ["--no-install", "sessionkit", "serve", "--root", root, "--port", "0"], { cwd: consumer, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const exited = new Promise((resolve) => server.once("exit", resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        server.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /sessionkit serve: (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        server.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
        server.once("exit", (code) => reject(new Error(`serve exited ${code} before printing its URL\n${err}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>sessionkit viewer</title>");
      const address = new URL(url);
      const stores = (await (await fetch(new URL(`/api/stores${address.search}`, address))).json()) as { label: string }[];
      expect(stores.map((store) => store.label)).toEqual([root]);
    } finally {
      // Ctrl+C reaches npx and the server it started: the whole process group.
      process.kill(-server.pid!, "SIGINT");
      await exited;
    }
  });
});
