/**
 * The habits of the `sessionkit` command line that users of pi and git expect, each run as a real
 * child process (test/shared/cli-runner.ts) over a small store made by the library.
 */
import { appendFile, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { SessionManager } from "../../src/index.js";
import { bundleCli, REPO, runCli, type CliResult } from "../shared/cli-runner.js";

let dir: string;
let root: string;
let cliBundle: string;
const cli = (...args: string[]): Promise<CliResult> => runCli(cliBundle, args);
const sk = (...args: string[]): Promise<CliResult> => runCli(cliBundle, ["--root", root, ...args]);

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** ESC ] 0 ; … BEL sets the window title; ESC ] 52 ; … BEL writes the clipboard; CSI (U+009B) is ESC [ in one character. */
const HOSTILE = "title\x1b]0;pwned\x07 clip\x1b]52;c;ZXZpbA==\x07 csi\u009b2J done";
const WIDE = "数据库迁移 🚀 plan";
/** 80 columns: cut to fit the listing's name column. */
const LONG_WIDE = "长".repeat(40);

/** Session ids of the store, by what their first message says. */
const ids: Record<string, string> = {};

async function addSession(cwd: string, text: string, answer = "ok"): Promise<void> {
  const storage = nodeFsStorage({ root });
  const sm = await SessionManager.create(storage, cwd);
  sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: answer }], api: "x", provider: "x", model: "x", usage, stopReason: "stop", timestamp: Date.now() });
  ids[text] = sm.getSessionId();
  await sm.close();
  await storage.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sk-cli-conventions-"));
  root = join(dir, "agent");
  cliBundle = await bundleCli(dir);
  await addSession("/work/hostile", HOSTILE, `answer ${HOSTILE}`);
  await addSession("/work/wide", WIDE);
  await addSession("/work/plain", "plain ascii question");
  await addSession("/work/long", LONG_WIDE);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("--version and <command> --help", () => {
  it("--version (and -v, as pi has it) prints the package's version alone", async () => {
    const { version } = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-v"]) expect(await cli(flag)).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("sessionkit <command> --help and sessionkit help <command> print that command's help, not the whole text", async () => {
    const whole = (await cli("--help")).stdout;
    for (const [command, flags] of [
      ["ls", ["--with-text"]],
      ["export", ["--leaf ID", "--no-blobs", "--html"]],
      ["search", ["--source LIST", "--limit N"]],
      ["serve", ["--agent-stores", "--allow-origin URL"]],
    ] as const) {
      const help = await cli(command, "--help");
      expect(help).toMatchObject({ code: 0, stderr: "" });
      expect(help.stdout).toMatch(new RegExp(`^Usage: sessionkit \\[--root DIR \\| --agent NAME \\| --store URL\\] ${command} `));
      for (const flag of flags) expect(help.stdout).toContain(flag);
      // Only its own: no other command's line, and shorter than the whole text.
      expect(help.stdout).not.toContain("  migrate <session>");
      expect(help.stdout.length).toBeLessThan(whole.length / 2);
      expect(help.stdout).toContain("Exit codes:");
      expect((await cli("help", command)).stdout).toBe(help.stdout);
    }
    expect((await cli("show", "--help")).stdout).toContain("A <session> is a session file, or a session id");
    expect(await cli("frobnicate", "--help")).toMatchObject({ code: 2, stderr: 'sessionkit: unknown command "frobnicate" (see sessionkit --help)\n' });
  });
});

describe("an empty query or id is a usage error", () => {
  it("an empty or blank argument or option value exits 2 naming what it should be", async () => {
    const cases = [
      [["show", ""], "show needs a session file or id prefix, not an empty argument"],
      [["verify", "  "], "verify needs a session file, id prefix or archive, not an empty argument"],
      [["export", "", "-o", "x.zip"], "export needs a session file or id prefix, not an empty argument"],
      [["search", ""], "search needs a query, not an empty argument"],
      [["search", " ", ""], "search needs a query, not an empty argument"],
      [["history", ""], "history takes a query or none, not an empty argument"],
      [["context", "abc", "--leaf", ""], "--leaf needs a value, not an empty string"],
      [["ls", "--cwd", ""], "--cwd needs a value, not an empty string"],
      [["--root", "", "ls"], "--root needs a value, not an empty string"],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => sk(...args)));
    for (const [i, result] of results.entries()) expect(result).toEqual({ code: 2, stdout: "", stderr: `sessionkit: ${cases[i]![1]} (see sessionkit --help)\n` });
  });
});

describe("search without --all", () => {
  it("says which project it searched and that --all searches every project, with hits or without", async () => {
    const scope = (project: string) => `searched the sessions of ${project} only: --all searches every project`;
    const found = await sk("search", "plain", "--cwd", "/work/plain");
    expect(found.code).toBe(0);
    expect(found.stdout.trimEnd().split("\n").slice(-2)).toEqual(["1 hit in 1 session, best first", scope("/work/plain")]);
    // The current directory by default.
    const here = await runCli(cliBundle, ["--root", root, "search", "plain"], { cwd: dir });
    expect(here.stdout).toBe(`no messages match "plain" in ${root}\n${scope(dir)}\n`);
    const everywhere = await sk("search", "plain", "--all");
    expect(everywhere.stdout).not.toContain("--all");
    expect(everywhere.stdout).toContain("1 hit in 1 session, best first\n");
  });
});

/**
 * The messages the CLI's sources make: the message argument of every CliError, UsageError and
 * HttpError, warning and stderr write, as its literal parts ("" where a value is put in).
 */
async function cliMessages(): Promise<Array<{ where: string; parts: string[] }>> {
  const messages: Array<{ where: string; parts: string[] }> = [];
  const files = (await readdir(join(REPO, "cli"), { recursive: true })).filter((name) => name.endsWith(".ts"));
  for (const name of files) {
    const source = ts.createSourceFile(name, await readFile(join(REPO, "cli", name), "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      let message: ts.Expression | undefined;
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        const index = { CliError: 1, UsageError: 0, HttpError: 1 }[node.expression.text];
        if (index !== undefined) message = node.arguments?.[index];
      } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const callee = node.expression.getText(source);
        if (callee === "run.warn" || callee.endsWith("stderr.write")) message = node.arguments[0];
      }
      if (message && (ts.isStringLiteral(message) || ts.isNoSubstitutionTemplateLiteral(message))) messages.push({ where: `${name}: ${message.getText(source)}`, parts: [message.text] });
      else if (message && ts.isTemplateExpression(message)) {
        const parts = [message.head.text, ...message.templateSpans.flatMap((span) => ["", span.literal.text])];
        messages.push({ where: `${name}: ${message.getText(source)}`, parts });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return messages;
}

/** A capitalized word (an acronym such as URL is not one) at the message's start or after a ": ". */
function capitalizedStarts(parts: string[]): string[] {
  const text = parts.join("\u0000");
  return [...text.matchAll(/(?:^|: )([A-Z][a-z]+)/g)].map((match) => match[1]!);
}

describe("messages start lower-case, as most of them did", () => {
  it("no error, usage or warning message of the CLI's sources starts with a capitalized word", async () => {
    const messages = await cliMessages();
    expect(messages.length).toBeGreaterThan(60);
    expect(messages.filter(({ parts }) => capitalizedStarts(parts).length > 0).map(({ where }) => where)).toEqual([]);
  });

  it("nor do the messages node:util's parseArgs makes", async () => {
    const results = await Promise.all([cli("ls", "--frob"), cli("ls", "--cwd"), cli("-x")]);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^sessionkit: [a-z]/);
    }
  });
});

/** The file of a session of the store, by what its first message says. */
async function fileOf(text: string): Promise<string> {
  const listed = JSON.parse((await sk("ls", "--all", "--json")).stdout) as Array<{ id: string; path: string }>;
  return listed.find((info) => info.id === ids[text])!.path;
}

describe("exit codes are one table: 1 not found, 2 usage, 3 invalid, 4 failed", () => {
  it("each failure exits with its kind's code, whichever command meets it", async () => {
    const notSession = join(dir, "plain-text.jsonl");
    await writeFile(notSession, "just some text\n");
    const damaged = join(dir, "damaged.jsonl");
    await copyFile(await fileOf("plain ascii question"), damaged);
    await appendFile(damaged, "not json\n");
    const notZip = join(dir, "not-a-zip.zip");
    await writeFile(notZip, "PK\x03\x04 and nothing else");
    const existing = join(dir, "existing.zip");
    await writeFile(existing, "");
    const plain = ids["plain ascii question"]!;
    const expected: Array<[number, string[]]> = [
      [0, ["verify", plain]],
      [1, ["show", join(dir, "missing.jsonl")]],
      [1, ["verify", join(dir, "missing.jsonl")]],
      [1, ["show", "ffffffff"]],
      [1, ["context", plain, "--leaf", "nonesuch"]],
      [1, ["export", plain, "--leaf", "nonesuch", "-o", join(dir, "leaf.zip")]],
      [2, ["frobnicate"]],
      [2, ["ls", "--frob"]],
      [3, ["show", notSession]],
      [3, ["tree", notSession]],
      [3, ["verify", notSession]],
      [3, ["verify", damaged]],
      [3, ["verify", notZip]],
      [3, ["import", notZip]],
      [4, ["export", plain, "-o", existing]],
    ];
    const results = await Promise.all(expected.map(([, args]) => sk(...args)));
    expect(results.map((result, i) => [result.code, expected[i]![1].join(" ")])).toEqual(expected.map(([code, args]) => [code, args.join(" ")]));
    const missingRoot = await cli("--root", join(dir, "no-such-root"), "ls", "--all");
    expect(missingRoot.code).toBe(1);
  });

  it("--help and docs/cli.md print the same table", async () => {
    const help = await cli("--help");
    const table = help.stdout.slice(help.stdout.indexOf("Exit codes:\n"));
    const rows = [...table.matchAll(/^ {2}(\d) {2}(.+(?:\n {5}.+)*)/gm)].map((m) => [Number(m[1]), m[2]!.replace(/\s+/g, " ")]);
    expect(rows.map(([code]) => code)).toEqual([0, 1, 2, 3, 4]);
    const docs = await readFile(join(REPO, "docs/cli.md"), "utf8");
    const documented = [...docs.matchAll(/^\| (\d) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2]!.replace(/`/g, "")]);
    expect(documented).toEqual(rows);
  });
});

/** Terminal columns of text made of ASCII, Han characters and emoji (two columns each). */
const columns = (text: string) => [...text].reduce((sum, char) => sum + (/\p{Script=Han}|\p{Emoji_Presentation}/u.test(char) ? 2 : 1), 0);

describe("tables align by display width", () => {
  it("ls: every row's PATH starts in the same column, wide names cut by columns, not characters", async () => {
    const result = await sk("ls", "--all");
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split("\n").slice(0, -1);
    const starts = [columns(header!.slice(0, header!.indexOf("PATH"))), ...rows.map((row) => columns(row.slice(0, row.indexOf(root))))];
    expect(rows).toHaveLength(4);
    expect(new Set(starts).size).toBe(1);
    const long = rows.find((row) => row.includes("长"))!;
    const name = long.slice(long.indexOf("长"), long.indexOf("…") + 1);
    expect(columns(name)).toBeLessThanOrEqual(48);
    expect(columns(name)).toBeGreaterThanOrEqual(47);
    expect(rows.find((row) => row.includes(WIDE))).toBeDefined();
  });
});

/** C0 controls but newline and tab, DEL and C1 controls: what a terminal acts on. */
const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe("text from session files reaches the terminal with its control sequences neutralised", () => {
  it("ls, show, tree and search print ESC, BEL and CSI as visible \\xNN escapes", async () => {
    const runs = await Promise.all([sk("ls", "--all"), sk("show", ids[HOSTILE]!), sk("tree", ids[HOSTILE]!), sk("search", "clip", "--all")]);
    for (const run of runs) {
      expect(run).toMatchObject({ code: 0, stderr: "" });
      expect(run.stdout).not.toMatch(TERMINAL_CONTROL);
      expect(run.stdout).toContain("title\\x1b]0;pwned\\x07");
    }
    expect(runs[1]!.stdout).toContain("clip\\x1b]52;c;ZXZpbA==\\x07 csi\\x9b2J done");
  });

  it("--json escapes DEL and C1 controls too (JSON.stringify leaves them raw); the parsed value is unchanged", async () => {
    const listed = await sk("ls", "--all", "--json");
    expect(listed.stdout).not.toMatch(TERMINAL_CONTROL);
    expect(listed.stdout).toContain("\\u009b");
    const infos = JSON.parse(listed.stdout) as Array<{ firstMessage: string }>;
    expect(infos.map((info) => info.firstMessage)).toContain(HOSTILE);
  });

  it("an error message quoting a file's bytes neutralises them too", async () => {
    const file = join(dir, "not-json.jsonl");
    await writeFile(file, "\x1b]0;pwned\x07\n");
    const result = await sk("show", file);
    expect(result.stderr).toMatch(/^sessionkit: show: .* is not a session file/);
    expect(result.stderr).not.toMatch(TERMINAL_CONTROL);
  });
});
