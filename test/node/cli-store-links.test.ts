/**
 * Agent stores whose own folders are symbolic links to folders elsewhere (a dotfiles setup, a
 * bigger disk): pi's `sessions -> <data>/pi-sessions`, oh-my-pi's `sessions` and `blobs` both
 * linked. The real CLI (bundled, as a child process) reads them as the agents do: `ls`, `show`,
 * `search`, `export --html` and `serve` (its HTTP listing and reads); a link inside a linked
 * folder (to the store's own auth.json) is still refused, as node-fs refuses every link below its
 * root; a dangling or non-directory `sessions` link is an error naming the folder.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { EXIT } from "../../cli/errors.js";
import { importSessionFiles } from "../../src/archive/index.js";
import { SessionManager, StorageError } from "../../src/index.js";
import { DATA_MARKER, EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";
import { SAMPLE_SESSION } from "../../web-demo/src/first-run.js";
import { bundleCli, runCli, type CliResult } from "../shared/cli-runner.js";

let dir: string;
let home: string;
let bundle: string;

interface LinkedStore {
  agent: "pi" | "omp";
  /** The store root (~/.pi/agent), whose top-level folders are links. */
  root: string;
  /** The real folder `sessions` links to. */
  sessionsTarget: string;
  /** The session's storage path, its id and a word only it holds. */
  path: string;
  id: string;
  word: string;
  /** The storage path of the link to auth.json inside the linked sessions folder. */
  leak: string;
}
const stores: LinkedStore[] = [];

const cli = (args: string[]): Promise<CliResult> => runCli(bundle, args, { cwd: dir, env: { HOME: home, XDG_CACHE_HOME: join(dir, "cache") } });
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * Fills the agent's store under $HOME with `fill`, then moves its `folders` out to
 * `<dir>/data/<agent>-<folder>` and leaves links to them in their place.
 */
async function linkedStore(agent: LinkedStore["agent"], fill: (storage: ReturnType<typeof nodeFsStorage>) => Promise<{ path: string; id: string; word: string }>, folders: string[]): Promise<LinkedStore> {
  const root = join(home, `.${agent}`, "agent");
  const storage = nodeFsStorage({ root });
  const session = await fill(storage);
  await storage.close();
  await mkdir(join(dir, "data"), { recursive: true });
  for (const folder of folders) {
    const target = join(dir, "data", `${agent}-${folder}`);
    await rename(join(root, folder), target);
    await symlink(target, join(root, folder));
  }
  // The store's secret, in the form of a session so that anything following the link would list,
  // search and serve it; the link sits where the agent's sessions are.
  await writeFile(join(root, "auth.json"), `{"type":"session","version":3,"id":"0000aaaa-0000-4000-8000-00000000auth","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/proj"}\n{"type":"message","id":"s1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"zqsecret token","timestamp":1}}\n`);
  const projectDir = session.path.split("/").slice(0, -1).join("/");
  const leak = `${projectDir}/leak.jsonl`;
  const sessionsTarget = join(dir, "data", `${agent}-sessions`);
  await symlink(join(root, "auth.json"), join(sessionsTarget, ...leak.split("/").slice(1)));
  return { agent, root, sessionsTarget, leak, ...session };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-store-links-"));
  home = join(dir, "home");
  await mkdir(join(dir, "pkg", "cli"), { recursive: true });
  bundle = await bundleCli(join(dir, "pkg", "cli"));
  // export --html fills the viewer's template at its marker; the viewer's own build is
  // cli-export-html.test.ts's subject: here a template with the marker is enough.
  await mkdir(join(dir, "pkg", "web-demo", "dist"), { recursive: true });
  await writeFile(join(dir, "pkg", "web-demo", "dist", EXPORT_TEMPLATE_FILE), `<!doctype html><title>t</title>${DATA_MARKER}\n`);

  stores.push(
    await linkedStore(
      "pi",
      async (storage) => {
        const sm = await SessionManager.create(storage, "/work/proj");
        sm.appendMessage({ role: "user", content: "where is the zqcomet", timestamp: Date.now() });
        sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "the zqcomet is up" }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
        await sm.close();
        return { path: sm.getSessionFile()!, id: sm.getSessionId(), word: "zqcomet" };
      },
      ["sessions"],
    ),
    await linkedStore(
      "omp",
      async (storage) => {
        // oh-my-pi's form: large images as refs to blobs/, so the blobs folder is read too.
        const summary = await importSessionFiles(storage, [{ name: "sample.jsonl", bytes: new TextEncoder().encode(SAMPLE_SESSION) }], { owner: "omp", layout: "omp" });
        const { id, path } = summary.sessions[0]!;
        return { id, path, word: "timezone" };
      },
      ["sessions", "blobs"],
    ),
  );
}, 120_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(["pi", "omp"] as const)("a %s store whose folders are links", (agent) => {
  const store = () => stores.find((s) => s.agent === agent)!;
  const file = () => join(store().root, ...store().path.split("/"));

  it("ls lists its session (and not the linked auth.json) through the link", async () => {
    const listed = await cli(["--root", store().root, "ls", "--all", "--json"]);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string; path: string }[]).map(({ id, path }) => ({ id, path }))).toEqual([{ id: store().id, path: file() }]);
  });

  it("show reads it by id prefix and by its path through the link, blobs included", async () => {
    for (const target of [store().id.slice(0, 8), file()]) {
      const shown = await cli(["--root", store().root, "show", target, "--json"]);
      expect(shown.stderr).toBe(""); // no missing blob, nothing skipped
      expect(shown.code).toBe(0);
      const printed = JSON.parse(shown.stdout) as { header: { id: string }; agent: string; context: { messages: unknown[] } };
      expect(printed.header.id).toBe(store().id);
      expect(printed.agent).toBe(agent);
      expect(JSON.stringify(printed.context.messages)).toContain(store().word);
    }
  });

  it("search finds its words, and none of what the inner link points to", async () => {
    const found = await cli(["--root", store().root, "search", store().word, "--all", "--json"]);
    expect(found.code).toBe(0);
    expect(new Set((JSON.parse(found.stdout) as { path: string }[]).map((hit) => hit.path))).toEqual(new Set([file()]));
    const secret = await cli(["--root", store().root, "search", "zqsecret", "--all", "--json"]);
    expect(secret.code).toBe(0);
    expect(JSON.parse(secret.stdout)).toEqual([]);
  });

  it("export --html embeds the session and every blob it refers to", async () => {
    const out = join(dir, `${agent}.html`);
    const exported = await cli(["--root", store().root, "export", "--html", store().id, "-o", out]);
    expect(exported.stderr).toBe("sessionkit: export: no secrets found, nothing redacted\n");
    expect(exported.code).toBe(0);
    const html = await readFile(out, "utf8");
    expect(html).toContain('data-sessionkit="session"');
    const blobs = agent === "omp" ? await readdir(join(dir, "data", "omp-blobs")) : [];
    if (agent === "omp") expect(blobs.length).toBeGreaterThan(0);
    expect([...html.matchAll(/data-sessionkit="blob" data-hash="([0-9a-f]+)"/g)].map((m) => m[1]).sort()).toEqual(blobs.sort());
  });

  it("serve lists and reads it over HTTP; the link inside the linked folder is refused", async () => {
    const child = spawn(process.execPath, [bundle, "serve", "--root", store().root, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: "", XDG_CACHE_HOME: join(dir, "cache") } });
    let stderr = "";
    child.stderr.on("data", (part: Buffer) => (stderr += part.toString()));
    try {
      let stdout = "";
      while (!stdout.includes("\n")) {
        const exited = once(child, "exit").then(() => Promise.reject(new Error(`serve exited: ${stderr}`)));
        const [part] = (await Promise.race([once(child.stdout, "data"), exited])) as [Buffer];
        stdout += part.toString();
      }
      const url = new URL(stdout.slice("sessionkit serve: ".length).trim());
      const token = url.searchParams.get("token")!;
      const [served] = (await (await fetch(new URL(`/api/stores?token=${token}`, url))).json()) as { id: string }[];
      const client = httpStorage({ url: url.origin, token, store: served!.id, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike });
      try {
        const projectDir = store().path.split("/").slice(0, -1).join("/");
        const names = (await client.list(projectDir)).map((entry) => entry.name);
        expect(names).toEqual([store().path.split("/").at(-1)]);
        expect(await client.read(store().path)).toEqual(new Uint8Array(await readFile(join(store().sessionsTarget, ...store().path.split("/").slice(1)))));
        await expect(client.read(store().leak)).rejects.toMatchObject({ name: StorageError.name, code: "forbidden" });
        expect((await SessionManager.listAll(client)).map((info) => info.id)).toEqual([store().id]);
      } finally {
        await client.close();
      }
    } finally {
      child.kill("SIGINT");
      await once(child, "close");
    }
  });
});

describe("stores whose folders are links", () => {
  it("every agent's store found under $HOME (no --root) is read through its links", async () => {
    const listed = await cli(["ls", "--all", "--json"]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string; agent: string }[]).map(({ id, agent }) => ({ id, agent })).sort((a, b) => a.agent.localeCompare(b.agent))).toEqual(
      stores.map(({ id, agent }) => ({ id, agent })).sort((a, b) => a.agent.localeCompare(b.agent)),
    );
  });

  it("import writes into a linked sessions folder, reading the source store's linked blobs", async () => {
    const root = join(dir, "import-target");
    const target = join(dir, "data", "import-sessions");
    await mkdir(root);
    await mkdir(target);
    await symlink(target, join(root, "sessions"));
    const omp = stores.find((s) => s.agent === "omp")!;
    const imported = await cli(["--root", root, "--agent", "pi", "import", join(omp.root, ...omp.path.split("/"))]);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    const written = await readdir(target, { recursive: true });
    const file = written.find((name) => name.endsWith(`_${omp.id}.jsonl`))!;
    // pi keeps images inline: the blobs came from oh-my-pi's linked blobs/.
    const text = await readFile(join(target, file), "utf8");
    expect(text).not.toContain("blob:sha256:");
    expect(text).toContain('"type":"image","data":"iVBORw0KGgo');
  });
});

describe("store folders linked wrong", () => {

  it("a dangling sessions link is an error naming the folder: exit 1 (not found), for ls and for serve", async () => {
    const root = join(dir, "dangling");
    await mkdir(root);
    const target = join(dir, "no-such-folder");
    await symlink(target, join(root, "sessions"));
    for (const args of [["ls", "--all"], ["serve", "--port", "0"]]) {
      const result = await cli(["--root", root, ...args]);
      expect(result.code).toBe(EXIT["not-found"]);
      expect(result.stderr).toContain(`${join(root, "sessions")} is a symbolic link to ${target}, which does not exist`);
    }
  });

  it("a sessions link to a file is an error naming the folder: exit 3 (invalid)", async () => {
    const root = join(dir, "to-a-file");
    await mkdir(root);
    const target = join(dir, "a-file");
    await writeFile(target, "not a folder\n");
    await symlink(target, join(root, "sessions"));
    const result = await cli(["--root", root, "ls", "--all"]);
    expect(result.code).toBe(EXIT.invalid);
    expect(result.stderr).toContain(`${join(root, "sessions")} is a symbolic link to ${target}, which is not a directory`);
  });
});
