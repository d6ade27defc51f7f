/**
 * Builds a sample store (pi's layout: sessions/--<cwd>--/*.jsonl, blobs/<sha256>) with the
 * library itself, as sessionkit's own store (its large images in blobs/): branches, labels, compactions, names, custom entries, images, thinking and
 * model changes, an oh-my-pi session, a v1 file from the corpus and a large session.
 *
 *   npm run samples            → samples/store (deleted and rebuilt)
 *   buildSamples(rootDir)      → the same store anywhere (tests)
 *
 * Content and dates are fixed (each session has its own days in January 2026, SAMPLE_STARTS; each
 * file's mtime is its latest timestamp); ids are random. The store's root holds
 * SAMPLE_STORE_MARKER: `sessionkit serve` reports the store as samples, and the viewer lists them
 * after the user's own sessions.
 */
import { readFile, rm, stat, utimes } from "node:fs/promises";
import nodePath from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { deflateSync, crc32 } from "node:zlib";
import { nodeFsStorage, type NodeFsStorage } from "../adapters/node-fs/index.js";
import { bytesToBase64 } from "../src/blobs/base64.js";
import { concatAll } from "../src/format/bytes.js";
import { SessionManager, type AgentMessage, type ImageContent, type SessionHeader } from "../src/index.js";
import { sessionDirFor, sessionFileName } from "../src/session/paths.js";
import { joinPath } from "../src/port.js";
import { SAMPLE_STORE_MARKER } from "../cli/serve/sample-store.js";

/** The samples are sessionkit's own store: images of 1024 base64 characters or more go to blobs/. */
const SAMPLE_STORE = { owner: "sessionkit" } as const;

const REPO = nodePath.resolve(nodePath.dirname(fileURLToPath(import.meta.url)), "..");
export const LEGACY_SOURCE = nodePath.join(REPO, "test/fixtures/corpus/badlogic__pi-mono/large-session.jsonl");

export interface SampleSession {
  /** Short name of what the session shows. */
  kind: "branching" | "fork" | "compaction" | "images" | "custom" | "omp" | "legacy-v1" | "large";
  /** Storage path below the root. */
  path: string;
  cwd: string;
  id: string;
  entries: number;
  bytes: number;
  description: string;
}

export interface SampleStore {
  root: string;
  sessions: SampleSession[];
  blobs: number;
}

// ---------------------------------------------------------------------------
// The samples' own dates
// ---------------------------------------------------------------------------

type BuiltKind = Exclude<SampleSession["kind"], "legacy-v1">;

/**
 * When each session starts. Fixed days in the past: a sample dated at build time would sort above
 * every session of the user's. All within one 2^32 ms span (2025-12-08 to 2026-01-27), so the
 * UUIDv7 session ids share their first 4 hex digits (the CLI's ambiguous-prefix test uses that).
 * The v1 file keeps the corpus's dates (2025-11-20).
 */
export const SAMPLE_STARTS: Readonly<Record<BuiltKind, string>> = {
  branching: "2026-01-08T09:12:00.000Z",
  fork: "2026-01-08T10:05:00.000Z",
  compaction: "2026-01-09T14:20:00.000Z",
  images: "2026-01-12T16:40:00.000Z",
  custom: "2026-01-13T08:55:00.000Z",
  omp: "2026-01-14T11:00:00.000Z",
  large: "2026-01-15T09:00:00.000Z",
};

/** The time of the session being built, in ms; SessionManager reads it through Date.now (onSampleClock). */
let sampleTime = 0;

function startsAt(kind: BuiltKind): void {
  sampleTime = Date.parse(SAMPLE_STARTS[kind]);
}

/** The clock moved on by `seconds` (a message comes some time after the one before it): its new time. */
function later(seconds: number): number {
  sampleTime += seconds * 1000;
  return sampleTime;
}

/**
 * Runs `build` with Date.now reading the samples' clock: SessionManager stamps each header, file
 * name, UUIDv7 session id and entry with Date.now and takes no clock of its own.
 */
async function onSampleClock<T>(build: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => sampleTime;
  try {
    return await build();
  } finally {
    Date.now = realNow;
  }
}

// ---------------------------------------------------------------------------
// Messages, shaped as pi writes them
// ---------------------------------------------------------------------------

const ANTHROPIC = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
const OPENAI = { api: "openai-responses", provider: "openai", model: "gpt-5.1-codex" };
type Model = typeof ANTHROPIC;

type Block = { type: "text"; text: string } | ImageContent | { type: "thinking"; thinking: string } | ToolCall;
interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

function user(text: string, images: ImageContent[] = []): AgentMessage {
  return { role: "user", content: [{ type: "text", text }, ...images], timestamp: later(40) };
}

function usage(chars: number) {
  const input = 1200 + chars;
  const output = Math.ceil(chars / 4);
  return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function assistant(blocks: Block[], model: Model = ANTHROPIC): AgentMessage {
  const chars = JSON.stringify(blocks).length;
  const stopReason = blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
  return { role: "assistant", content: blocks, ...model, usage: usage(chars), stopReason, timestamp: later(15) };
}

const say = (text: string, model?: Model) => assistant([{ type: "text", text }], model);
const think = (thinking: string): Block => ({ type: "thinking", thinking });
const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({ type: "toolCall", id, name, arguments: args });

function toolResult(toolCall: ToolCall, text: string, images: ImageContent[] = []): AgentMessage {
  return {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: [{ type: "text", text }, ...images],
    isError: false,
    timestamp: later(2),
  };
}

/** A tool call and its result, appended as pi appends them. */
function useTool(sm: SessionManager, toolCall: ToolCall, result: string, lead?: Block): string {
  sm.appendMessage(assistant(lead ? [lead, toolCall] : [toolCall]));
  return sm.appendMessage(toolResult(toolCall, result));
}

// ---------------------------------------------------------------------------
// Real PNGs, made here
// ---------------------------------------------------------------------------

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const typeBytes = new TextEncoder().encode(type);
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(typeBytes, 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** An RGB PNG of `width`×`height` whose pixels come from `pixel(x, y)`. */
export function makePng(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Uint8Array {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolor, deflate, no filter method, no interlace
  const raw = new Uint8Array(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3);
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return concatAll([signature, pngChunk("IHDR", header), pngChunk("IDAT", deflateSync(raw)), pngChunk("IEND", new Uint8Array())]);
}

/** Fixed pseudo-random noise (so the PNG does not compress below the blob threshold). */
function noise(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 24;
  };
}

function image(bytes: Uint8Array): ImageContent {
  return { type: "image", data: bytesToBase64(bytes), mimeType: "image/png" };
}

/** A 64×40 "screenshot": a gradient with noise; ~10 KB of base64, so it goes to blobs/. */
function screenshot(): ImageContent {
  const next = noise(7);
  return image(makePng(64, 40, (x, y) => [(x * 4 + next()) & 0xff, (y * 6 + next()) & 0xff, 0x80 ^ next()]));
}

/** A 32×32 "diagram": noisy stripes; ~4 KB of base64, goes to blobs/. */
function diagram(): ImageContent {
  const next = noise(11);
  return image(makePng(32, 32, (x, y) => ((x + y) % 8 < 4 ? [0x20, 0x40, next()] : [next(), 0xe0, 0xc0])));
}

/** A 4×4 icon: far below 1024 base64 chars, so it stays inline. */
function icon(): ImageContent {
  return image(makePng(4, 4, (x, y) => ((x + y) % 2 === 0 ? [0xff, 0x66, 0x00] : [0xff, 0xff, 0xff])));
}

// ---------------------------------------------------------------------------
// The sessions
// ---------------------------------------------------------------------------

const WEBAPP = "/home/demo/webapp";
const CLI_TOOL = "/home/demo/cli-tool";
const NOTES = "/home/demo/notes";
const OMP_PROJECT = "/srv/omp/agent-project";
const BIG_REPO = "/home/demo/bigrepo";

const LOGIN_TS = `export async function handleLogin(req: Request, res: Response) {
  const user = await authenticate(req.body.email, req.body.password);
  if (!user) return res.status(401).render("login", { error: "Wrong email or password" });
  req.session.userId = user.id;
  return res.redirect("/home");
}`;

/** Two branches from one answer, a branch summary, labels (one cleared), a name, model and thinking changes. */
async function buildBranching(storage: NodeFsStorage): Promise<{ sm: SessionManager; optionBLeaf: string }> {
  startsAt("branching");
  const sm = await SessionManager.create(storage, WEBAPP, SAMPLE_STORE);
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage(user("After login, users land on /home instead of the page they came from. Can you find out why?"));
  const read = call("toolu_login_read", "read", { path: "src/auth/login.ts" });
  useTool(sm, read, LOGIN_TS, think("The redirect target must be lost somewhere in the login handler. Read it first."));
  const diagnosis = sm.appendMessage(
    say(
      "`handleLogin` always redirects to `/home`: the page the user came from is never recorded.\n\n" +
        "Two ways to fix it:\n" +
        "A. keep the target in the session before showing the login form;\n" +
        "B. pass it along as a `?next=` query parameter.",
    ),
  );
  sm.appendLabelChange(diagnosis, "diagnosis");

  const optionA = sm.appendMessage(user("Try option A: keep the target in the session."));
  sm.appendLabelChange(optionA, "option-a");
  const editA = call("toolu_login_edit_a", "edit", { path: "src/auth/login.ts", oldText: 'res.redirect("/home")', newText: 'res.redirect(req.session.returnTo ?? "/home")' });
  useTool(sm, editA, "Edited src/auth/login.ts (1 replacement).");
  sm.appendMessage(say("Done: the login handler now redirects to `req.session.returnTo` when it is set."));

  sm.branch(diagnosis);
  sm.appendMessage(user("Actually, try option B: pass it as a query parameter."));
  const editB = call("toolu_login_edit_b", "edit", { path: "src/auth/login.ts", oldText: 'res.redirect("/home")', newText: 'res.redirect(safeNext(req.query.next) ?? "/home")' });
  useTool(sm, editB, "Edited src/auth/login.ts (1 replacement).");
  const optionBLeaf = sm.appendMessage(say("Done: `?next=` is validated by `safeNext` and used as the redirect target."));
  sm.appendLabelChange(optionBLeaf, "option-b");

  sm.branchWithSummary(
    diagnosis,
    "Tried option B (a ?next= query parameter, validated by safeNext). It works, but it puts internal paths into URLs that users share.",
    { readFiles: ["src/auth/login.ts"], modifiedFiles: ["src/auth/login.ts"] },
  );
  const finalAsk = sm.appendMessage(user("Let's go with option A after all, and add a test for it."));
  sm.appendLabelChange(finalAsk, "wip");
  sm.appendModelChange("openai", "gpt-5.1-codex");
  sm.appendThinkingLevelChange("high");
  const write = call("call_login_test", "write", { path: "test/auth/login.test.ts", content: "it('returns to the page the user came from', …)" });
  sm.appendMessage(assistant([think("Option A again, then a test that logs in from /settings."), write], OPENAI));
  sm.appendMessage(toolResult(write, "Wrote test/auth/login.test.ts (18 lines)."));
  sm.appendMessage(say("Option A is back in place and `test/auth/login.test.ts` checks the redirect to /settings.", OPENAI));
  sm.appendLabelChange(finalAsk, undefined);
  sm.appendSessionInfo("Fix the login redirect");
  await sm.flush();
  return { sm, optionBLeaf };
}

/** Two compactions; only the last one shapes the context. */
async function buildCompaction(storage: NodeFsStorage): Promise<SessionManager> {
  startsAt("compaction");
  const sm = await SessionManager.create(storage, WEBAPP, SAMPLE_STORE);
  const turns = [
    ["Add pagination to GET /api/orders.", "I'll add `page` and `pageSize` query parameters with a default page size of 50."],
    ["Cap pageSize at 200.", "Done: larger values are clamped to 200."],
    ["Return the total count too.", "The response now has `{ items, page, pageSize, total }`."],
    ["Use a cursor instead of page numbers for the mobile client.", "Added `cursor` (the last order id) as an alternative to `page`."],
    ["Document both styles in docs/api.md.", "docs/api.md now describes page-based and cursor-based pagination."],
    ["Add tests for the cursor edge cases.", "Added tests for an empty cursor, an unknown cursor and the last page."],
  ];
  const userIds: string[] = [];
  for (const [ask, answer] of turns) {
    userIds.push(sm.appendMessage(user(ask!)));
    sm.appendMessage(say(answer!));
  }
  sm.appendCompaction(
    "The user asked for pagination on GET /api/orders: page/pageSize (default 50, capped at 200), a total count, and cursor-based paging for mobile.",
    userIds[3]!,
    48_210,
    { readFiles: ["src/api/orders.ts"], modifiedFiles: ["src/api/orders.ts", "docs/api.md"] },
  );
  sm.appendMessage(user("Now make the default page size configurable."));
  sm.appendMessage(say("`ORDERS_PAGE_SIZE` in the environment now sets the default (50 when unset)."));
  sm.appendCompaction(
    "Pagination on GET /api/orders is done (page-based and cursor-based, documented and tested); the default page size comes from ORDERS_PAGE_SIZE.",
    userIds[5]!,
    61_877,
    undefined,
    true,
  );
  sm.appendMessage(user("Thanks. Anything left to do?"));
  sm.appendMessage(say("Only a changelog entry; everything else is in place."));
  sm.appendSessionInfo("Orders pagination");
  await sm.flush();
  return sm;
}

/** Images in user messages, tool results and a custom message: large ones go to blobs/, once. */
async function buildImages(storage: NodeFsStorage): Promise<SessionManager> {
  startsAt("images");
  const sm = await SessionManager.create(storage, CLI_TOOL, SAMPLE_STORE);
  sm.appendMessage(user("The progress bar renders on two lines in narrow terminals, see the screenshot.", [screenshot()]));
  const read = call("toolu_read_diagram", "read", { path: "docs/layout.png" });
  sm.appendMessage(assistant([think("Compare with the layout diagram in the docs."), read]));
  sm.appendMessage(toolResult(read, "Read image file [image/png]", [diagram()]));
  sm.appendMessage(say("The bar assumes 80 columns. I'll measure `process.stdout.columns` and shrink the label first."));
  sm.appendMessage(user("Use this icon for the done state.", [icon()]));
  sm.appendMessage(say("The done state now shows the icon next to the label."));
  sm.appendCustomMessageEntry("screenshot-check", [{ type: "text", text: "Automated check: the screenshot still matches." }, screenshot()], true, { matched: true });
  sm.appendCustomEntry("terminal-size", { columns: 60, rows: 20 });
  sm.appendSessionInfo("Progress bar in narrow terminals");
  await sm.flush();
  return sm;
}

/** Custom entries (state only) and custom messages (shown or hidden), a bash execution. */
async function buildCustom(storage: NodeFsStorage): Promise<SessionManager> {
  startsAt("custom");
  const sm = await SessionManager.create(storage, NOTES, SAMPLE_STORE);
  sm.appendCustomEntry("todo-state", { items: [{ text: "summarize yesterday", done: false }, { text: "plan the week", done: false }] });
  sm.appendCustomMessageEntry("reminder", "Stand-up at 10:00: summarize yesterday's notes first.", true);
  sm.appendCustomMessageEntry("context-file", [{ type: "text", text: "NOTES.md: 2026-01-12 shipped the export dialog; found a crash in import." }], false, { source: "NOTES.md" });
  sm.appendMessage(user("Summarize yesterday's notes in three bullets."));
  sm.appendMessage(say("- Shipped the export dialog.\n- Found a crash in import (not fixed yet).\n- Planned the week's work on sync."));
  sm.appendMessage({
    role: "bashExecution",
    command: "grep -c TODO NOTES.md",
    output: "4",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: later(3),
  });
  sm.appendCustomEntry("todo-state", { items: [{ text: "summarize yesterday", done: true }, { text: "plan the week", done: false }] });
  sm.appendMessage(user("How many TODOs are left?"));
  sm.appendMessage(say("Four TODOs are left in NOTES.md."));
  await sm.flush();
  return sm;
}

/** oh-my-pi's dialect: session_init, role models, mode changes, TTSR injections. */
async function buildOmp(storage: NodeFsStorage): Promise<SessionManager> {
  startsAt("omp");
  const sm = await SessionManager.create(storage, OMP_PROJECT, SAMPLE_STORE);
  sm.appendSessionInit({
    systemPrompt: "You are a careful coding agent. Plan before you edit.",
    task: "Replace the hand-written CLI parser with node:util parseArgs.",
    tools: ["read", "bash", "edit", "write"],
  });
  sm.appendRoleModelChange("anthropic/claude-sonnet-4-5");
  sm.appendRoleModelChange("openai/gpt-5-mini", "smol");
  sm.appendModeChange("plan", { maxSteps: 3 });
  sm.appendMessage(user("Start with a plan."));
  sm.appendMessage(say("1. List the flags the old parser accepts.\n2. Map them to parseArgs options.\n3. Replace the parser and run the CLI tests."));
  sm.appendTtsrInjection(["no-any-casts", "prefer-node-builtins"]);
  sm.appendModeChange("act");
  const grep = call("toolu_grep_flags", "bash", { command: "grep -n 'case \"--' src/cli.ts" });
  useTool(sm, grep, '12:    case "--root":\n15:    case "--json":\n18:    case "--all":');
  sm.appendTtsrInjection(["prefer-node-builtins", "keep-exit-codes"]);
  sm.appendMessage(say("The parser now uses parseArgs with strict mode; the three flags behave as before."));
  sm.appendCompaction("Planned and replaced the CLI parser with parseArgs; flags --root, --json and --all kept.", sm.getLeafId()!, 9_120);
  sm.appendMessage(user("Good. Switch the smol role to a local model."));
  sm.appendRoleModelChange("ollama/qwen3-coder", "smol");
  sm.appendMessage(say("The smol role now uses ollama/qwen3-coder."));
  await sm.flush();
  return sm;
}

/** A session of thousands of entries (~6 MB): a deep chain with tool output, labels and a compaction. */
async function buildLarge(storage: NodeFsStorage): Promise<SessionManager> {
  startsAt("large");
  const TURNS = 1500;
  const sm = await SessionManager.create(storage, BIG_REPO, SAMPLE_STORE);
  sm.appendSessionInfo("Audit every module");
  sm.appendThinkingLevelChange("low");
  let compactFrom = "";
  for (let turn = 0; turn < TURNS; turn++) {
    const module = `src/modules/module-${String(turn).padStart(4, "0")}.ts`;
    const asked = sm.appendMessage(user(`Audit ${module}: list its exported functions and anything suspicious.`));
    if (turn === 1100) compactFrom = asked;
    const read = call(`toolu_audit_${turn}`, "read", { path: module });
    const source = Array.from({ length: 40 }, (_, line) => `export function f${turn}_${line}(x: number): number { return x * ${line + 1} + ${turn}; }`).join("\n");
    useTool(sm, read, source);
    const answer = sm.appendMessage(say(`${module} exports 40 small arithmetic functions (f${turn}_0 … f${turn}_39). Nothing suspicious: no I/O, no globals.`));
    if (turn % 250 === 249) sm.appendLabelChange(answer, `checkpoint ${turn + 1}`);
    if (turn === 1300) {
      sm.appendCompaction(`Audited modules 0000–1299: every module exports 40 pure arithmetic functions; nothing suspicious found.`, compactFrom, 181_000);
    }
  }
  await sm.flush();
  return sm;
}

/** pi's own v1 file (no ids, no version), copied byte for byte to where pi would keep it. */
async function copyLegacy(storage: NodeFsStorage): Promise<{ path: string; header: SessionHeader }> {
  const bytes = await readFile(LEGACY_SOURCE);
  const firstLine = bytes.subarray(0, bytes.indexOf(0x0a)).toString("utf8");
  const header = JSON.parse(firstLine) as SessionHeader;
  const path = joinPath(sessionDirFor(header.cwd!), sessionFileName(header.timestamp, header.id));
  await storage.write(path, new Uint8Array(bytes));
  return { path, header };
}

// ---------------------------------------------------------------------------

async function describe(storage: NodeFsStorage, kind: SampleSession["kind"], sm: SessionManager, description: string): Promise<SampleSession> {
  const path = sm.getSessionFile()!;
  const size = (await storage.stat(path))?.size ?? 0;
  return { kind, path, cwd: sm.getCwd(), id: sm.getSessionId(), entries: sm.getEntries().length, bytes: size, description };
}

/** When a session file was last written: its latest timestamp (a fork's header is newer than the entries it copied). */
function lastWritten(text: string): Date {
  let latest = Number.NEGATIVE_INFINITY;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const time = Date.parse((JSON.parse(line) as { timestamp?: string }).timestamp ?? "");
    if (!Number.isNaN(time)) latest = Math.max(latest, time);
  }
  if (latest === Number.NEGATIVE_INFINITY) throw new Error("a sample session has no timestamps");
  return new Date(latest);
}

/** Builds the sample store in `root` (which should be empty or absent). */
export async function buildSamples(root: string): Promise<SampleStore> {
  const storage = nodeFsStorage({ root });
  const sessions: SampleSession[] = [];
  const add = async (kind: SampleSession["kind"], sm: SessionManager, description: string) => {
    await sm.close();
    sessions.push(await describe(storage, kind, sm, description));
  };
  try {
    await onSampleClock(async () => {
      const { sm: branching, optionBLeaf } = await buildBranching(storage);
      await add("branching", branching, "two branches, a branch summary, labels (one cleared), name, model and thinking changes");

      startsAt("fork");
      const fork = await SessionManager.open(storage, sessions[0]!.path, SAMPLE_STORE);
      fork.createBranchedSession(optionBLeaf);
      await add("fork", fork, "the option-B branch as its own session (parentSession set, label re-emitted)");

      await add("compaction", await buildCompaction(storage), "two compactions (the last one counts), a name");
      await add("images", await buildImages(storage), "PNG screenshots in blobs/ (one stored once, used twice), an inline icon, custom entries");
      await add("custom", await buildCustom(storage), "custom and custom_message entries (shown and hidden), a bash execution, unnamed");
      await add("omp", await buildOmp(storage), "oh-my-pi dialect: session_init, role models, mode changes, TTSR rules, a compaction");
      await add("large", await buildLarge(storage), "1500 turns in one chain, labels every 250 turns, a compaction");
    });

    const legacy = await copyLegacy(storage);
    const legacySize = (await storage.stat(legacy.path))?.size ?? 0;
    const legacyEntries = (await readFile(LEGACY_SOURCE, "utf8")).split("\n").filter((line) => line.trim() !== "").length - 1;
    sessions.push({
      kind: "legacy-v1",
      path: legacy.path,
      cwd: legacy.header.cwd ?? "",
      id: legacy.header.id,
      entries: legacyEntries,
      bytes: legacySize,
      description: "pi's v1 format (no ids), copied unchanged from the corpus; migrated in memory on read",
    });
    // Each file's mtime as if pi had written it then: tools that go by mtime (pi's --continue) agree with the dates.
    for (const session of sessions) {
      const file = nodePath.join(storage.root, session.path);
      const written = lastWritten(await readFile(file, "utf8"));
      await utimes(file, written, written);
    }
    // Last: a store without it is not a whole sample store (scripts/start.ts rebuilds it).
    const marker = { about: "Sample sessions made by sessionkit's scripts/build-samples.ts, not by an agent of yours.", sessions: sessions.map(({ kind, path, description }) => ({ kind, path, description })) };
    await storage.write(SAMPLE_STORE_MARKER, new TextEncoder().encode(`${JSON.stringify(marker, null, 2)}\n`));
    const blobs = (await storage.list("blobs")).filter((entry) => entry.kind === "file").length;
    return { root: storage.root, sessions, blobs };
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const root = nodePath.join(REPO, "samples/store");
  await rm(root, { recursive: true, force: true });
  const started = performance.now();
  const store = await buildSamples(root);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`Built ${store.sessions.length} sessions and ${store.blobs} blobs in ${store.root} (${seconds} s):`);
  for (const s of store.sessions) {
    console.log(`  ${s.kind.padEnd(10)} ${String(s.entries).padStart(5)} entries ${(s.bytes / 1024).toFixed(0).padStart(6)} KB  ${s.cwd}`);
    console.log(`             ${s.description}`);
    console.log(`             ${s.path}`);
  }
  const total = (await Promise.all(store.sessions.map((s) => stat(nodePath.join(store.root, s.path))))).reduce((n, info) => n + info.size, 0);
  console.log(`Total ${(total / 1024 / 1024).toFixed(1)} MB of session files. Try: sessionkit --root ${nodePath.relative(process.cwd(), store.root) || "."} ls --all`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
