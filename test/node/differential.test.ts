/**
 * Differential test against pi's own SessionManager (@mariozechner/pi-coding-agent 0.73.1).
 *
 * Seeded random operation sequences run on both implementations, pi writing into one temp dir
 * and ours (node-fs) into another. After every operation both sessions must have the same
 * structure (entry ids differ, so entries are compared by position). At the end every written
 * file is opened by BOTH implementations, which must agree on everything they report, and the
 * two files must describe the same session. A failing sequence reproduces from its seed. Every
 * sequence runs with both of our parse modes (lazy and full).
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { SessionManager as PiSessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import {
  SessionManager,
  type AgentMessage,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfo,
  type SessionTreeNode,
} from "../../src/index.js";
import { PARSE_MODES, type ParseMode } from "../shared/corpus-observe.js";
import { mulberry32, type Rng } from "../shared/prng.js";

const SEQUENCES = 32;
const OPS_PER_SEQUENCE = 40;
const BASE_SEED = 0x5e55_1000;
const CWD = "/home/dev/diff-project";
const OUR_SESSION_DIR = "sessions";
/** pi's store: what we write there is what pi writes. */
const OUR_OPTIONS = { owner: "pi" } as const;

/** What both SessionManagers offer with the same names and meaning (pi's is cast to it). */
interface SessionApi {
  getEntries(): SessionEntry[];
  getBranch(fromId?: string): SessionEntry[];
  getLeafId(): string | null;
  getTree(): SessionTreeNode[];
  getSessionName(): string | undefined;
  getHeader(): SessionHeader | null;
  getChildren(parentId: string): SessionEntry[];
  getLabel(id: string): string | undefined;
  buildSessionContext(): SessionContext;
  getSessionFile(): string | undefined;
  appendMessage(message: AgentMessage): string;
  appendThinkingLevelChange(level: string): string;
  appendModelChange(provider: string, modelId: string): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: unknown, fromHook?: boolean): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendCustomMessageEntry(customType: string, content: CustomContent, display: boolean, details?: unknown): string;
  appendLabelChange(targetId: string, label: string | undefined): string;
  appendSessionInfo(name: string): string;
  branch(id: string): void;
  resetLeaf(): void;
  branchWithSummary(from: string | null, summary: string, details?: unknown, fromHook?: boolean): string;
}

type CustomContent = string | Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }>;

const asApi = (pi: PiSessionManager): SessionApi => pi as unknown as SessionApi;

// ============================================================================
// Random operations
// ============================================================================

/** Entry targets are positions in getEntries(), so one operation means the same on both sides. */
type Op =
  | { kind: "message"; message: AgentMessage }
  | { kind: "thinking"; level: string }
  | { kind: "model"; provider: string; modelId: string }
  | { kind: "compaction"; summary: string; firstKept: number; tokensBefore: number; details?: unknown; fromHook?: boolean }
  | { kind: "custom"; customType: string; data?: unknown }
  | { kind: "customMessage"; customType: string; content: CustomContent; display: boolean; details?: unknown }
  | { kind: "label"; target: number; label: string | undefined }
  | { kind: "sessionInfo"; name: string }
  | { kind: "branch"; target: number }
  | { kind: "resetLeaf" }
  | { kind: "branchWithSummary"; target: number | null; summary: string; details?: unknown; fromHook?: boolean }
  | { kind: "reload" };

const WORDS = ["fix", "the", "bug", "in", "parser", "émigré", "日本語", "🚀", 'quote"d', "back\\slash", "line\nbreak", "tab\t", "\u2028sep", "ok", "résumé", "数据", "0"];

function text(rng: Rng, maxWords = 8): string {
  return Array.from({ length: rng.between(1, maxWords) }, () => rng.pick(WORDS)).join(" ");
}

/** Base64 well under 1024 chars: neither side moves it out of the line. */
function smallImage(rng: Rng): { type: "image"; data: string; mimeType: string } {
  const bytes = new Uint8Array(rng.between(1, 600));
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(256);
  return { type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: rng.pick(["image/png", "image/jpeg"]) };
}

function details(rng: Rng): unknown {
  return rng.pick([undefined, { readFiles: [text(rng, 2)], modifiedFiles: [] }, null, 42]);
}

function message(rng: Rng, timestamp: number): AgentMessage {
  const role = rng.pick(["user", "user", "assistant", "assistant", "assistant", "toolResult"] as const);
  if (role === "user") {
    const content = rng.chance(0.5) ? text(rng) : [{ type: "text", text: text(rng) }, ...(rng.chance(0.4) ? [smallImage(rng)] : [])];
    return { role, content, timestamp };
  }
  if (role === "toolResult") {
    const content = [{ type: "text", text: text(rng) }, ...(rng.chance(0.3) ? [smallImage(rng)] : [])];
    return { role, toolCallId: `call_${rng.int(1000)}`, toolName: rng.pick(["read", "bash"]), content, isError: rng.chance(0.2), timestamp };
  }
  const content: unknown[] = [];
  if (rng.chance(0.3)) content.push({ type: "thinking", thinking: text(rng) });
  if (rng.chance(0.8)) content.push({ type: "text", text: text(rng) });
  if (rng.chance(0.3)) content.push({ type: "toolCall", id: `call_${rng.int(1000)}`, name: "read", arguments: { path: text(rng, 2) } });
  return {
    role,
    content,
    api: "anthropic-messages",
    provider: rng.pick(["anthropic", "openai"]),
    model: rng.pick(["claude-x", "gpt-y"]),
    usage: { input: rng.int(900), output: rng.int(900), cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: rng.pick(["stop", "toolUse"]),
    timestamp,
  };
}

/** The next operation, given how many entries there are and the positions on the current branch. */
function nextOp(rng: Rng, step: number, entryCount: number, branch: readonly number[]): Op {
  const timestamp = 1_750_000_000_000 + step * 1000;
  const anyEntry = () => rng.int(entryCount);
  const roll = rng.int(100);
  if (roll < 34 || entryCount === 0) return { kind: "message", message: message(rng, timestamp) };
  if (roll < 38) return { kind: "thinking", level: rng.pick(["off", "low", "medium", "high"]) };
  if (roll < 42) return { kind: "model", provider: rng.pick(["anthropic", "openai"]), modelId: rng.pick(["m1", "m2"]) };
  if (roll < 48 && branch.length > 0) {
    return { kind: "compaction", summary: text(rng), firstKept: rng.pick(branch), tokensBefore: rng.int(100_000), details: details(rng), fromHook: rng.pick([undefined, true, false]) };
  }
  if (roll < 52) return { kind: "custom", customType: rng.pick(["ext-a", "ext-b"]), data: rng.pick([undefined, null, { n: rng.int(9), list: [text(rng, 2)] }, "s"]) };
  if (roll < 58) {
    const content: CustomContent = rng.chance(0.5) ? text(rng) : [{ type: "text", text: text(rng) }, ...(rng.chance(0.5) ? [smallImage(rng)] : [])];
    return { kind: "customMessage", customType: rng.pick(["hook", "note"]), content, display: rng.chance(0.5), details: details(rng) };
  }
  if (roll < 66) return { kind: "label", target: anyEntry(), label: rng.pick(["checkpoint", "⭐ best", "", undefined, text(rng, 2)]) };
  if (roll < 70) return { kind: "sessionInfo", name: rng.pick(["  Fix the bug ", "naming", "", "   ", "日本語 名前", text(rng, 3)]) };
  if (roll < 80) return { kind: "branch", target: anyEntry() };
  if (roll < 83) return { kind: "resetLeaf" };
  if (roll < 91) {
    return { kind: "branchWithSummary", target: rng.chance(0.2) ? null : anyEntry(), summary: text(rng), details: details(rng), fromHook: rng.pick([undefined, true]) };
  }
  if (roll < 97) return { kind: "reload" };
  return { kind: "message", message: message(rng, timestamp) };
}

/** Applies a non-reload operation; positions become this side's ids. */
function apply(api: SessionApi, op: Exclude<Op, { kind: "reload" }>): void {
  const entries = api.getEntries();
  const id = (position: number) => entries[position]!.id;
  const copy = <T>(value: T): T => structuredClone(value);
  switch (op.kind) {
    case "message":
      api.appendMessage(copy(op.message));
      return;
    case "thinking":
      api.appendThinkingLevelChange(op.level);
      return;
    case "model":
      api.appendModelChange(op.provider, op.modelId);
      return;
    case "compaction":
      api.appendCompaction(op.summary, id(op.firstKept), op.tokensBefore, copy(op.details), op.fromHook);
      return;
    case "custom":
      api.appendCustomEntry(op.customType, copy(op.data));
      return;
    case "customMessage":
      api.appendCustomMessageEntry(op.customType, copy(op.content), op.display, copy(op.details));
      return;
    case "label":
      api.appendLabelChange(id(op.target), op.label);
      return;
    case "sessionInfo":
      api.appendSessionInfo(op.name);
      return;
    case "branch":
      api.branch(id(op.target));
      return;
    case "resetLeaf":
      api.resetLeaf();
      return;
    case "branchWithSummary":
      api.branchWithSummary(op.target === null ? null : id(op.target), op.summary, copy(op.details), op.fromHook);
      return;
  }
}

// ============================================================================
// Comparison
// ============================================================================

const json = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

interface TreeShape {
  at: number;
  label?: string;
  labelled: boolean;
  children: TreeShape[];
}

/**
 * A session with ids replaced by positions and wall-clock times dropped: what must be equal
 * between two implementations that ran the same operations.
 */
function shape(api: SessionApi) {
  const entries = api.getEntries();
  const positions = new Map(entries.map((e, i) => [e.id, i]));
  const ref = (id: unknown) => (typeof id === "string" && positions.has(id) ? `#${positions.get(id)}` : id);
  const tree = (node: SessionTreeNode): TreeShape => ({
    at: positions.get(node.entry.id)!,
    label: node.label,
    labelled: node.labelTimestamp !== undefined,
    children: node.children.map(tree),
  });
  const context = api.buildSessionContext();
  const header = api.getHeader();
  return json({
    header: header && { type: header.type, version: header.version, cwd: header.cwd, parentSession: header.parentSession },
    entries: entries.map((entry) => {
      const { id: _id, parentId, timestamp: _time, ...rest } = json(entry);
      for (const key of ["targetId", "firstKeptEntryId", "fromId"] as const) if (key in rest) rest[key] = ref(rest[key]);
      return { parent: ref(parentId), ...rest };
    }),
    leaf: ref(api.getLeafId()),
    branch: api.getBranch().map((e) => positions.get(e.id)),
    children: entries.map((e) => api.getChildren(e.id).map((c) => positions.get(c.id))),
    labels: entries.map((e) => api.getLabel(e.id)),
    tree: api.getTree().map(tree),
    name: api.getSessionName(),
    context: {
      thinkingLevel: context.thinkingLevel,
      model: context.model,
      messages: context.messages.map((m) => {
        // Summary and custom messages carry their entry's wall-clock time and id.
        if (m.role === "custom" || m.role === "compactionSummary") return { ...m, timestamp: undefined };
        if (m.role === "branchSummary") return { ...m, timestamp: undefined, fromId: ref(m.fromId) };
        return m;
      }),
    },
  });
}

/** Everything one implementation reports about an opened file; ids are the file's own. */
function report(api: SessionApi) {
  return json({
    header: api.getHeader(),
    entries: api.getEntries(),
    tree: api.getTree(),
    branch: api.getBranch(),
    leaf: api.getLeafId(),
    context: api.buildSessionContext(),
    name: api.getSessionName(),
    children: api.getEntries().map((e) => api.getChildren(e.id).map((c) => c.id)),
    labels: api.getEntries().map((e) => api.getLabel(e.id)),
  });
}

function listFields(info: SessionInfo | undefined) {
  expect(info, "listed").toBeDefined();
  const { path: _path, created, modified, ...rest } = info!;
  return json({ ...rest, created: created.getTime(), modified: modified.getTime() });
}

// ============================================================================
// The sequences
// ============================================================================

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sessionkit-differential-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

/** Opens one file with both implementations and requires them to agree; returns what ours saw. */
async function readWithBoth(workspace: string, storagePath: string, parse: ParseMode) {
  const storage = nodeFsStorage({ root: workspace });
  const absolute = join(workspace, storagePath);
  const ours = await SessionManager.open(storage, storagePath, { readOnly: true, parse });
  const theirs = asApi(PiSessionManager.open(absolute));
  expect(ours.getLoadProblems()).toEqual([]);
  expect(report(ours), `${storagePath}: ours and pi read it the same`).toEqual(report(theirs));

  const dir = storagePath.slice(0, storagePath.lastIndexOf("/"));
  const ourInfo = (await SessionManager.list(storage, CWD, { sessionDir: dir, withText: true })).find((i) => i.path === storagePath);
  const piInfo = (await PiSessionManager.list(CWD, join(workspace, dir))).find((i) => i.path === absolute);
  expect(listFields(ourInfo), `${storagePath}: list info`).toEqual(listFields(piInfo));
  const seen = { shape: shape(ours), info: listFields(ourInfo), entries: json(ours.getEntries()) };
  await ours.close();
  await storage.close();
  return seen;
}

describe.each(PARSE_MODES)("differential: random sequences against pi's SessionManager (parse: %s)", (parse) => {
  for (let i = 0; i < SEQUENCES; i++) {
    const seed = (BASE_SEED + i * 7919) >>> 0;
    it(`sequence ${i} (seed ${seed})`, async () => {
      const rng = mulberry32(seed);
      const workspace = join(root, `${parse}-seed-${seed}`);
      const piDir = join(workspace, "pi");
      const storage = nodeFsStorage({ root: join(workspace, "ours") });

      let pi = PiSessionManager.create(CWD, piDir);
      let ours = await SessionManager.create(storage, CWD, { ...OUR_OPTIONS, sessionDir: OUR_SESSION_DIR });
      const piPath = pi.getSessionFile()!;
      const ourPath = ours.getSessionFile()!;
      const trace: string[] = [];

      for (let step = 0; step < OPS_PER_SEQUENCE; step++) {
        const entries = ours.getEntries();
        const positions = new Map(entries.map((e, at) => [e.id, at]));
        const op = nextOp(rng, step, entries.length, ours.getBranch().map((e) => positions.get(e.id)!));
        trace.push(op.kind);
        if (op.kind === "reload") {
          await ours.close();
          ours = await SessionManager.open(storage, ourPath, { ...OUR_OPTIONS, parse, cwdOverride: CWD });
          pi = PiSessionManager.open(piPath, piDir, CWD);
        } else {
          apply(ours, op);
          apply(asApi(pi), op);
        }
        expect(shape(ours), `after step ${step}: ${trace.join(", ")}`).toEqual(shape(asApi(pi)));
      }
      await ours.close();
      await storage.close();

      // pi writes nothing until the first assistant message, and neither do we.
      const piWrote = await exists(piPath);
      expect(await exists(join(workspace, "ours", ourPath)), "both or neither wrote a file").toBe(piWrote);
      if (!piWrote) {
        expect(ours.getEntries().some((e) => e.type === "message" && e.message.role === "assistant")).toBe(false);
        return;
      }

      const fromPi = await readWithBoth(workspace, `pi/${basename(piPath)}`, parse);
      const fromOurs = await readWithBoth(workspace, `ours/${ourPath}`, parse);
      // The two files hold the same session: what each side had in memory, in the same shape.
      expect(fromOurs.entries).toEqual(json(ours.getEntries()));
      expect(fromPi.entries).toEqual(json(pi.getEntries()));
      expect(fromOurs.shape).toEqual(fromPi.shape);
      const { id: _ourId, created: _ourCreated, ...ourInfo } = fromOurs.info;
      const { id: _piId, created: _piCreated, ...piInfo } = fromPi.info;
      expect(ourInfo).toEqual(piInfo);
    });
  }
});
