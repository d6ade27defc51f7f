/**
 * Redaction on the way out, through the real CLI (bundled, as a child process): zip with
 * --redact, HTML (redacted by default), JSONL with --redact. No planted secret survives in what
 * was written; images are kept; a redacted zip imports and opens with the same tree; the store is
 * byte-identical afterwards; the counts per kind are printed, and recorded in the manifest.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { parseManifest } from "../../src/archive/manifest.js";
import { SessionManager, type SessionEntry } from "../../src/index.js";
import { bundleCli, runCli } from "../shared/cli-runner.js";
import { sessionOfPage, writeBareExportTemplate, zipMembers } from "../shared/exported-text.js";
import { mulberry32 } from "../shared/prng.js";
import { PLANTED_IMAGE, PLANTED_FIELDS, SECRET_KINDS, writePlantedSessions, type PlantedSecret } from "../shared/planted-secrets.js";

let dir: string;
let root: string;
let cli: string;
let planted: PlantedSecret[];
/** Storage paths of the planted sessions, one per kind. */
let sessions: string[];
let storeBefore: Map<string, string>;

const sk = (...args: string[]) => runCli(cli, ["--root", root, ...args]);
const fileOf = (path: string) => join(root, ...path.split("/"));
/** Planted secrets still in `text`: whole, or any line of one (a private key's), as written or JSON-escaped. */
const survivors = (text: string, of: readonly PlantedSecret[] = planted) =>
  of.filter((plant) => plant.secret.split("\n").some((part) => text.includes(part) || text.includes(JSON.stringify(part).slice(1, -1)))).map((plant) => `${plant.name} in ${plant.field}`);
/** Planted secrets per kind: what a redacted export of all of them must report. */
const plantedCounts = (of: readonly PlantedSecret[]) => of.reduce<Record<string, number>>((counts, plant) => ({ ...counts, [plant.kind]: (counts[plant.kind] ?? 0) + 1 }), {});

/** Every file under `dir` with the sha256 of its bytes. */
async function fingerprint(top: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out.set(relative(top, path), createHash("sha256").update(await readFile(path)).digest("hex"));
    }
  };
  await walk(top);
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-secrets-export-"));
  root = join(dir, "store");
  await mkdir(join(dir, "pkg", "cli"), { recursive: true });
  cli = await bundleCli(join(dir, "pkg", "cli"));
  await writeBareExportTemplate(join(dir, "pkg"));
  const storage = nodeFsStorage({ root });
  planted = await writePlantedSessions(storage, "/work/app", mulberry32(2024));
  await storage.close();
  sessions = [...new Set(planted.map((plant) => plant.path))];
  storeBefore = await fingerprint(root);
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("export --redact (zip)", () => {
  it("leaves no planted secret in any member, keeps the images, records and prints the counts per kind", async () => {
    const out = join(dir, "redacted.zip");
    const result = await sk("export", ...sessions.map(fileOf), "-o", out, "--redact");
    expect(result.code).toBe(0);
    const counts = plantedCounts(planted);
    const total = planted.length;
    expect(result.stderr).toContain(`sessionkit: export: redacted ${total} secrets: `);
    for (const [kind, count] of Object.entries(counts)) expect(result.stderr).toMatch(new RegExp(`[:,] ${count} ${kind}(,|\\n)`));
    const members = await zipMembers(await readFile(out));
    const text = [...members.values()].map((bytes) => new TextDecoder().decode(bytes)).join("\n");
    expect(survivors(text)).toEqual([]);
    for (const kind of Object.keys(counts)) expect(text).toContain(`[REDACTED:${kind}]`);
    const manifest = parseManifest(members.get("manifest.json")!);
    // The lowest version that has `redacted` (a plain archive stays 1.0).
    expect(manifest.version).toBe("1.1");
    expect(manifest.redacted).toEqual(counts);
    // Every session member is valid JSONL, its image kept.
    for (const [name, bytes] of members) {
      if (!name.endsWith(".jsonl")) continue;
      const lines = new TextDecoder().decode(bytes).trimEnd().split("\n");
      expect(lines.length).toBe(PLANTED_FIELDS.length + 2);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(lines.join("\n")).toContain(PLANTED_IMAGE);
    }
  });

  it("imports and opens with the same tree: the same ids, the same parent links, the same entry types; import prints the counts", async () => {
    const out = join(dir, "tree.zip");
    expect((await sk("export", ...sessions.map(fileOf), "-o", out, "--redact")).code).toBe(0);
    const target = join(dir, "imported");
    const imported = await runCli(cli, ["--root", target, "import", out]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`redacted on export: ${planted.length} secrets: `);
    const source = nodeFsStorage({ root });
    const copy = nodeFsStorage({ root: target });
    try {
      for (const path of sessions) {
        const original = await SessionManager.open(source, path, { readOnly: true });
        const back = await SessionManager.open(copy, path, { readOnly: true });
        const shape = (entries: readonly SessionEntry[]) => entries.map((entry) => [entry.id, entry.parentId, entry.type]);
        expect(shape(back.getEntries())).toEqual(shape(original.getEntries()));
        expect(back.getLeafId()).toBe(original.getLeafId());
        expect(back.getSessionName()).toContain("[REDACTED:");
        await original.close();
        await back.close();
      }
    } finally {
      await source.close();
      await copy.close();
    }
  });

  it("without --redact, a zip is a backup: every secret is in it, and the manifest has no 'redacted'", async () => {
    const out = join(dir, "plain.zip");
    const result = await sk("export", ...sessions.map(fileOf), "-o", out);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("redacted");
    const members = await zipMembers(await readFile(out));
    const text = [...members.values()].map((bytes) => new TextDecoder().decode(bytes)).join("\n");
    expect(survivors(text)).toHaveLength(planted.length);
    const manifest = parseManifest(members.get("manifest.json")!);
    expect(manifest.version).toBe("1.0");
    expect("redacted" in manifest).toBe(false);
  });
});

describe("export --html (redacted unless --no-redact)", () => {
  it("leaves no planted secret in the page or its session, and keeps the images; --no-redact keeps them all", async () => {
    for (const path of sessions) {
      const plants = planted.filter((plant) => plant.path === path);
      const out = join(dir, "page.html");
      const result = await sk("export", "--html", fileOf(path), "-o", out, "--force");
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(`sessionkit: export: redacted ${plants.length} secrets: ${plants.length} ${plants[0]!.kind}\n`);
      const html = await readFile(out, "utf8");
      const session = sessionOfPage(html);
      expect(survivors(html + session, plants)).toEqual([]);
      expect(session).toContain(PLANTED_IMAGE);
      expect(session.trimEnd().split("\n")).toHaveLength(PLANTED_FIELDS.length + 2);
    }
    const out = join(dir, "unredacted.html");
    expect((await sk("export", "--html", "--no-redact", fileOf(sessions[0]!), "-o", out)).code).toBe(0);
    const session = sessionOfPage(await readFile(out, "utf8"));
    expect(survivors(session, planted.filter((plant) => plant.path === sessions[0]))).toHaveLength(PLANTED_FIELDS.length);
  });

  it("redacts the page's <title> (the session's name) too", async () => {
    const out = join(dir, "title.html");
    expect((await sk("export", "--html", fileOf(sessions[0]!), "-o", out)).code).toBe(0);
    const title = /<title>([^<]*)<\/title>/.exec(await readFile(out, "utf8"))![1]!;
    expect(title).toContain(`[REDACTED:${SECRET_KINDS[0]!.kind}]`);
  });
});

describe("export --jsonl", () => {
  it("--redact: one session file, valid JSONL, no planted secret, the image inline, the same ids; --json reports the counts", async () => {
    for (const path of sessions) {
      const plants = planted.filter((plant) => plant.path === path);
      const out = join(dir, "session.jsonl");
      const result = await sk("export", "--jsonl", "--redact", fileOf(path), "-o", out, "--force", "--json");
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ entries: PLANTED_FIELDS.length + 1, redacted: { [plants[0]!.kind]: plants.length } });
      const text = await readFile(out, "utf8");
      expect(survivors(text, plants)).toEqual([]);
      const records = text.trimEnd().split("\n").map((line) => JSON.parse(line) as { id: string });
      const stored = (await readFile(fileOf(path), "utf8")).trimEnd().split("\n").map((line) => (JSON.parse(line) as { id: string }).id);
      expect(records.map((record) => record.id)).toEqual(stored);
      expect(text).toContain(PLANTED_IMAGE);
    }
  });

  it("is not redacted by default (a session file, like a zip, is a transfer)", async () => {
    const out = join(dir, "plain.jsonl");
    const result = await sk("export", "--jsonl", fileOf(sessions[0]!), "-o", out);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(survivors(await readFile(out, "utf8"), planted.filter((plant) => plant.path === sessions[0]))).toHaveLength(PLANTED_FIELDS.length);
  });

  it("refuses --redact with --no-redact, --html with --jsonl, several sessions", async () => {
    const out = join(dir, "refused.jsonl");
    expect((await sk("export", "--jsonl", "--redact", "--no-redact", fileOf(sessions[0]!), "-o", out)).stderr).toContain("export takes --redact or --no-redact, not both");
    expect((await sk("export", "--jsonl", "--html", fileOf(sessions[0]!), "-o", out)).stderr).toContain("export takes --html or --jsonl, not both");
    expect((await sk("export", "--jsonl", fileOf(sessions[0]!), fileOf(sessions[1]!), "-o", out)).code).toBe(2);
  });
});

describe("the manifest's versions", () => {
  it("a reader takes a newer minor with keys it does not know (as a 1.0 reader takes a redacted 1.1 archive)", () => {
    const manifest = { format: "sessionkit-archive", version: "1.9", generator: "x", created: "2026-01-01T00:00:00.000Z", sessions: [], blobs: [], laterKey: { a: 1 } };
    expect(parseManifest(new TextEncoder().encode(JSON.stringify(manifest)))).toMatchObject({ version: "1.9", sessions: [] });
  });
});

describe("the store", () => {
  it("is byte-identical after every export above", async () => {
    expect(await fingerprint(root)).toEqual(storeBefore);
  });
});
