/** `sessionkit serve` as a real child process: its line, Ctrl+C, a busy port, a non-loopback host. */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleCli, runCli } from "../shared/cli-runner.js";

let dir: string;
let bundle: string;
let root: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sessionkit-serve-cli-"));
  bundle = await bundleCli(dir);
  root = join(dir, "agent");
  await mkdir(join(root, "sessions", "--p--"), { recursive: true });
  await writeFile(join(root, "sessions", "--p--", "s.jsonl"), '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Starts `serve` (over `root` unless `args` say otherwise) and resolves with its printed URL once it is listening. */
async function startServe(args: string[], env: Record<string, string> = {}, serveArgs = ["--root", root]): Promise<{ child: ChildProcess; url: URL; stderr: () => string }> {
  const child = spawn(process.execPath, [bundle, "serve", ...serveArgs, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PI_CODING_AGENT_DIR: "", XDG_CACHE_HOME: join(dir, "cache"), ...env } });
  let stderr = "";
  child.stderr!.on("data", (part: Buffer) => (stderr += part.toString()));
  let stdout = "";
  while (!stdout.includes("\n")) {
    const [part] = (await Promise.race([once(child.stdout!, "data"), once(child, "exit").then(() => { throw new Error(`serve exited: ${stderr}`); })])) as [Buffer];
    stdout += part.toString();
  }
  expect(stdout).toMatch(/^sessionkit serve: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}\n$/);
  return { child, url: new URL(stdout.slice("sessionkit serve: ".length).trim()), stderr: () => stderr };
}

describe("sessionkit serve (CLI)", () => {
  it("prints one line with the URL and its token, answers with it, and stops cleanly on Ctrl+C (SIGINT)", async () => {
    const { child, url, stderr } = await startServe(["--port", "0"]);
    const stores = (await (await fetch(new URL(`/api/stores?${url.searchParams}`, url))).json()) as { id: string; readOnly: boolean }[];
    expect(stores).toEqual([{ id: expect.stringMatching(/^agent-[0-9a-f]{6}$/), label: root, readOnly: true }]);
    expect((await fetch(new URL("/api/stores", url))).status).toBe(401);

    child.kill("SIGINT");
    const [code] = (await once(child, "close")) as [number];
    expect(code).toBe(0);
    expect(stderr()).toContain("sessionkit serve: stopped");
    await expect(fetch(new URL(`/api/stores?${url.searchParams}`, url))).rejects.toThrow();
  });

  it("a second serve on a busy port says so and exits 4 (failed)", async () => {
    const first = await startServe(["--port", "0"]);
    try {
      const second = await runCli(bundle, ["serve", "--root", root, "--port", first.url.port]);
      expect(second.code).toBe(4);
      expect(second.stderr).toContain(`port ${first.url.port} on 127.0.0.1 is in use`);
      expect(second.stdout).toBe("");
    } finally {
      first.child.kill("SIGINT");
      await once(first.child, "exit");
    }
  });

  it("warns when listening beyond this machine, and --write makes the store writable", async () => {
    const { child, stderr } = await startServe(["--port", "0", "--host", "0.0.0.0", "--write"]);
    child.kill("SIGTERM");
    await once(child, "close"); // its output read to the end
    expect(stderr()).toContain("warning: listening on 0.0.0.0");
    expect(stderr()).toContain("(writable)");
  });

  it("--agent-stores serves every agent's store found besides each --root; a --root that is one of them is served once, as the agent's", async () => {
    const home = join(dir, "home");
    for (const agentDir of [".pi/agent", ".omp/agent"]) await mkdir(join(home, agentDir, "sessions"), { recursive: true });
    const storesOf = async (serveArgs: string[]) => {
      const { child, url } = await startServe(["--port", "0"], { HOME: home }, serveArgs);
      try {
        return ((await (await fetch(new URL(`/api/stores?${url.searchParams}`, url))).json()) as { label: string; agent?: string }[]).map(({ label, agent }) => [agent ?? null, label]);
      } finally {
        child.kill("SIGINT");
        await once(child, "close");
      }
    };
    expect(await storesOf(["--agent-stores", "--root", root])).toEqual([
      ["pi", "pi ~/.pi/agent"],
      ["omp", "omp ~/.omp/agent"],
      [null, root],
    ]);
    expect(await storesOf(["--agent-stores", "--agent", "omp", "--root", root, "--root", join(home, ".omp/agent")])).toEqual([
      ["omp", "omp ~/.omp/agent"],
      [null, root],
    ]);
    expect(await storesOf(["--root", root])).toEqual([[null, root]]);
    expect(await storesOf([])).toEqual([
      ["pi", "pi ~/.pi/agent"],
      ["omp", "omp ~/.omp/agent"],
    ]);
  });

  it("--allow-origin with a file: or data: URL is a usage error (exit 2): its origin, \"null\", is every sandboxed frame's", async () => {
    for (const origin of ["file:///home/me/viewer.html", "data:text/html,hi"]) {
      const child = spawn(process.execPath, [bundle, "serve", "--root", root, "--port", "0", "--allow-origin", origin], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PI_CODING_AGENT_DIR: "", XDG_CACHE_HOME: join(dir, "cache") } });
      let stderr = "";
      child.stderr!.on("data", (part: Buffer) => (stderr += part.toString()));
      const exited = once(child, "close").then(([code]) => code as number);
      // Serving (its URL printed) is the failure this guards against: stopped, and reported as such.
      const outcome = await Promise.race([exited, once(child.stdout!, "data").then(() => "served" as const)]);
      if (outcome === "served") {
        child.kill("SIGINT");
        await exited;
      }
      expect(outcome, origin).toBe(2);
      expect(stderr).toContain(`--allow-origin must be an http: or https: URL such as http://localhost:5173: "${origin}" has no origin of its own`);
    }
  });

  it("refuses bad usage: a missing root, a bad port, two roots for another command", async () => {
    expect((await runCli(bundle, ["serve", "--root", join(dir, "nope"), "--port", "0"])).stderr).toContain("no such directory");
    const badPort = await runCli(bundle, ["serve", "--root", root, "--port", "http"]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain("--port must be a number");
    expect((await runCli(bundle, ["ls", "--root", root, "--root", root])).stderr).toContain("--root given 2 times");
  });
});
