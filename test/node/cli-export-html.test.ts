/**
 * `sessionkit export --html`: the real CLI (bundled, as a child process) beside a real viewer
 * build (vite, into the temp dir laid out as the package is: cli/ and web-demo/dist/), on a store
 * with blobs. The page it writes is checked here as bytes (the data blocks, the policy, nothing
 * external); e2e/viewer-export.spec.ts opens such files in Chromium.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { importSessionFiles } from "../../src/archive/index.js";
import { SessionManager } from "../../src/index.js";
import { sessionDirFor, sessionFileName } from "../../src/session/paths.js";
import { DATA_MARKER, EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";
import { SAMPLE_SESSION } from "../../web-demo/src/first-run.js";
import { bundleCli, REPO, runCli } from "../shared/cli-runner.js";

let dir: string;
let cli: string;
let root: string;
let sessionId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-cli-html-"));
  await mkdir(join(dir, "pkg", "cli"), { recursive: true });
  cli = await bundleCli(join(dir, "pkg", "cli"));
  await build({ configFile: join(REPO, "web-demo", "vite.config.ts"), logLevel: "silent", build: { outDir: join(dir, "pkg", "web-demo", "dist"), emptyOutDir: true } });
  root = join(dir, "store");
  const storage = nodeFsStorage({ root });
  // A store of sessionkit's own: the sample's images go to blobs/, which the page must carry.
  const summary = await importSessionFiles(storage, [{ name: "sample.jsonl", bytes: new TextEncoder().encode(SAMPLE_SESSION) }], { owner: "sessionkit" });
  sessionId = summary.sessions[0]!.id;
  await storage.close();
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The session file from its data blocks: base64 pieces of one gzip stream. */
const inflate = async (pieces: string[]) => gunzipSync(Buffer.concat(pieces.map((p) => Buffer.from(JSON.parse(p) as string, "base64")))).toString("utf8");
const dataBlocks = (html: string, kind: string) => [...html.matchAll(new RegExp(`<script type="application/json" data-sessionkit="${kind}"[^>]*>([\\s\\S]*?)</script>`, "g"))].map((m) => m[1]!);

describe("export --html", () => {
  it("writes one page: the viewer inline under a hash-based policy, the session as stored (nothing to redact), its blobs inline", async () => {
    const out = join(dir, "sample.html");
    const result = await runCli(cli, ["--root", root, "export", "--html", sessionId.slice(0, 8), "-o", out, "--json"]);
    expect(result.stderr).toBe("sessionkit: export: no secrets found, nothing redacted\n");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ output: out, sessionId, entries: 27, missingBlobs: [] });
    const html = await readFile(out, "utf8");
    expect(summary.bytes).toBe(Buffer.byteLength(html));
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!;
    expect(csp).toMatch(/default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+' 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src data: blob:/);
    // The two scripts it allows: the page's, and the highlighter block it runs when code is first highlighted.
    const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
    const script = /<script type="module">([\s\S]*?)<\/script>/.exec(html)![1]!;
    const highlighter = /<script type="text\/x-sessionkit-deferred" id="sessionkit-highlight">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(csp).toContain(`script-src ${sha256(script)} ${sha256(highlighter)};`);
    expect(highlighter).toContain("sessionkitHighlight");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=(?!"data:)/);
    const storage = nodeFsStorage({ root });
    const [info] = await SessionManager.listAll(storage);
    const stored = new TextDecoder().decode((await storage.read(info!.path))!);
    await storage.close();
    expect(await inflate(dataBlocks(html, "session"))).toBe(stored);
    expect(dataBlocks(html, "blob")).toHaveLength(2);
    expect(html).toContain("<title>Flaky due-date test · sessionkit</title>");
  });

  it("a session file outside the root, named by its absolute path: the page holds it, warnings name the file", async () => {
    const storage = nodeFsStorage({ root });
    const [info] = await SessionManager.listAll(storage);
    const stored = new TextDecoder().decode((await storage.read(info!.path))!);
    await storage.close();
    const loose = join(dir, "loose", "copied.jsonl");
    await mkdir(join(dir, "loose"), { recursive: true });
    // A torn last line: opening it warns, naming the file.
    await writeFile(loose, `${stored}{"type":"message","id":"torn`);
    const out = join(dir, "loose.html");
    // Unredacted: the file goes as it is (redacted, a file with a line that did not load is re-serialized).
    const result = await runCli(cli, ["--root", root, "export", "--html", "--no-redact", loose, "-o", out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`sessionkit: export: ${loose}: `);
    expect(result.stderr).not.toContain("outside-root/");
    expect(await inflate(dataBlocks(await readFile(out, "utf8"), "session"))).toBe(`${stored}{"type":"message","id":"torn`);
  });

  it("--leaf: only the branch; refuses an existing file without --force, several sessions, --no-blobs", async () => {
    const storage = nodeFsStorage({ root });
    const [info] = await SessionManager.listAll(storage);
    const sm = await SessionManager.open(storage, info!.path, { readOnly: true });
    const other = sm.getEntries().find((e) => e.type === "message" && e.message.role === "assistant" && JSON.stringify(e).includes("due-date.dst.test.ts"))!;
    const branchLength = sm.getBranch(other.id).length;
    await sm.close();
    await storage.close();
    const out = join(dir, "branch.html");
    const result = await runCli(cli, ["--root", root, "export", "--html", sessionId, "--leaf", other.id, "-o", out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`(${branchLength} entries, branch to ${other.id})`);
    const lines = (await inflate(dataBlocks(await readFile(out, "utf8"), "session"))).trim().split("\n");
    expect(lines).toHaveLength(branchLength + 1);
    expect(lines.join("\n")).not.toContain("The README now says");

    const again = await runCli(cli, ["--root", root, "export", "--html", sessionId, "-o", out]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain("exists: not replacing it (use --force to replace it)");
    expect((await runCli(cli, ["--root", root, "export", "--html", sessionId, "-o", out, "--force"])).code).toBe(0);
    const two = await runCli(cli, ["--root", root, "export", "--html", sessionId, sessionId, "-o", out]);
    expect(two.stderr).toContain("--html exports a single session, got 2");
    const noBlobs = await runCli(cli, ["--root", root, "export", "--html", "--no-blobs", sessionId, "-o", out]);
    expect(noBlobs.stderr).toContain("--html always includes the images");
  });

  it("a name and texts holding replacement patterns ($&, $`, $', $1, $$): the name as it is, the template's markup once, the texts as stored", async () => {
    const name = "Fix $& and $` and $' and $1 and $$ <b>\"x\"</b>";
    const text = "Say $& then $` then $' then $1 then $$";
    const id = "01a1fdb6-0000-7000-8000-00000000a11d";
    const timestamp = "2026-03-01T10:00:00.000Z";
    const records = [
      { type: "session", version: 3, id, timestamp, cwd: "/p" },
      { type: "message", id: "q", parentId: null, timestamp, message: { role: "user", content: text, timestamp: 1 } },
      { type: "session_info", id: "n", parentId: "q", timestamp, name },
    ];
    const template = await readFile(join(dir, "pkg", "web-demo", "dist", EXPORT_TEMPLATE_FILE), "utf8");
    const patterned = join(dir, "patterned-store");
    const stored = records.map((record) => JSON.stringify(record)).join("\n") + "\n";
    await mkdir(join(patterned, sessionDirFor("/p")), { recursive: true });
    await writeFile(join(patterned, sessionDirFor("/p"), sessionFileName(timestamp, id)), stored);
    // The loose copy's path holds patterns too: a warning names the file as it is.
    const loose = join(dir, "loose $& $` $' $1", "torn.jsonl");
    await mkdir(dirname(loose), { recursive: true });
    await writeFile(loose, `${stored}{"type":"message","id":"torn`);
    for (const [target, contents] of [[id, stored], [loose, `${stored}{"type":"message","id":"torn`]] as const) {
      const out = join(dir, "patterned.html");
      // --no-redact: the page holds the file as stored, torn line included (redaction re-encodes a damaged file).
      const result = await runCli(cli, ["--root", patterned, "export", "--html", target, "-o", out, "--force", "--no-redact"]);
      expect(result.code).toBe(0);
      if (target === loose) expect(result.stderr).toContain(`sessionkit: export: ${loose}: `);
      const html = await readFile(out, "utf8");
      // The page is the template, its title replaced by the name (HTML-escaped) and the data blocks at its marker, nothing else.
      const templateTitle = /<title>[^<]*<\/title>/.exec(template)!;
      const [templateHead, templateRest] = [template.slice(0, templateTitle.index), template.slice(templateTitle.index + templateTitle[0].length)];
      const start = html.indexOf("<title>") + "<title>".length;
      const end = html.indexOf(" · sessionkit</title>", start);
      expect(html.slice(0, start)).toBe(`${templateHead}<title>`);
      expect(html.slice(start, end).replaceAll("&lt;", "<").replaceAll("&quot;", '"').replaceAll("&amp;", "&")).toBe(name);
      expect(html.slice(end + " · sessionkit</title>".length).replace(/<script type="application\/json" data-sessionkit="[^"]+"[^>]*>"[^"]*"<\/script>\n/g, "")).toBe(templateRest.replace(DATA_MARKER, ""));
      expect(await inflate(dataBlocks(html, "session"))).toBe(contents);
    }
  });

  it("says how to build the viewer when its export template is missing", async () => {
    const bare = join(dir, "bare");
    await mkdir(bare, { recursive: true });
    const alone = await bundleCli(bare);
    const result = await runCli(alone, ["--root", root, "export", "--html", sessionId, "-o", join(dir, "x.html")]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("export-template.html is not built: run `npx vite build web-demo` first");
  });
});
