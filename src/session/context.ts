/**
 * buildSessionContext: what a session sends to the model, walking root → leaf. Matches pi
 * exactly; omp's extra state (models by role, TTSR rules, mode) is added only when omp entries
 * are on the path. A seed-003 file's context follows its seed's build_session_context (see
 * format/DIALECTS.md).
 */
import type { SessionDialect } from "../format/dialect.js";
import type {
  AgentMessage,
  CompactionEntry,
  ContextModel,
  SessionContext,
  SessionEntry,
} from "../format/types.js";

const OMP_TYPES = new Set(["ttsr_injection", "mode_change", "session_init"]);

/** The root → `leaf` path; stops at a missing parent. */
export function pathToRoot(leaf: SessionEntry | undefined, byId: ReadonlyMap<string, SessionEntry>): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  for (let current = leaf; current && !seen.has(current.id); ) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return path.reverse();
}

export function indexById(entries: readonly SessionEntry[]): Map<string, SessionEntry> {
  const byId = new Map<string, SessionEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  return byId;
}

/**
 * The leaf a file's entries leave: the last entry, except that a seed-003 `leaf` entry points at
 * its target (one whose target is unknown is passed over). null when there are no entries.
 */
export function lastLeafId(entries: readonly SessionEntry[], byId: ReadonlyMap<string, SessionEntry>): string | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type !== "leaf") return entry.id;
    if (byId.has(entry.targetId)) return entry.targetId;
  }
  return null;
}

export interface ContextOptions {
  /** The dialect of the file the entries come from: seed 003 has its own rules. Default "pi". */
  dialect?: SessionDialect;
}

/**
 * `leafId === null` → empty context; an unknown or absent leaf → the last entry (see `lastLeafId`).
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId: ReadonlyMap<string, SessionEntry> = indexById(entries),
  options: ContextOptions = {},
): SessionContext {
  if (leafId === null) return { messages: [], thinkingLevel: "off", model: null };
  const fallback = lastLeafId(entries, byId);
  const leaf = (leafId ? byId.get(leafId) : undefined) ?? (fallback === null ? undefined : byId.get(fallback));
  if (!leaf) return { messages: [], thinkingLevel: "off", model: null };
  const path = pathToRoot(leaf, byId);
  if (options.dialect === "seed003") return seed003Context(entries, path);

  let thinkingLevel = "off";
  let model: ContextModel | null = null;
  let compaction: CompactionEntry | null = null;
  let omp: NonNullable<SessionContext["omp"]> | undefined;
  const ompState = () => (omp ??= { models: {}, injectedTtsrRules: [], mode: "none" });

  for (const entry of path) {
    switch (entry.type) {
      case "thinking_level_change":
        thinkingLevel = entry.thinkingLevel;
        break;
      case "model_change":
        if (typeof entry.model === "string") {
          // omp: "provider/modelId" per role; the default role is the model in pi's sense.
          const role = entry.role ?? "default";
          ompState().models[role] = entry.model;
          if (role === "default") model = splitModel(entry.model);
        } else {
          model = { provider: entry.provider as string, modelId: entry.modelId as string };
        }
        break;
      case "message":
        if (entry.message.role === "assistant") {
          model = { provider: entry.message.provider as string, modelId: entry.message.model as string };
        }
        break;
      case "compaction":
        compaction = entry;
        break;
      case "ttsr_injection": {
        const rules = ompState().injectedTtsrRules;
        for (const rule of entry.injectedRules) if (!rules.includes(rule)) rules.push(rule);
        break;
      }
      case "mode_change":
        ompState().mode = entry.mode;
        ompState().modeData = entry.data;
        break;
      default:
        if (OMP_TYPES.has(entry.type)) ompState();
    }
  }

  const messages: AgentMessage[] = [];
  if (compaction) {
    messages.push(compactionSummaryMessage(compaction));
    const compactionIndex = path.indexOf(compaction);
    let kept = false;
    for (let i = 0; i < compactionIndex; i++) {
      const entry = path[i]!;
      if (entry.id === compaction.firstKeptEntryId) kept = true;
      if (kept) appendContextMessage(messages, entry);
    }
    for (let i = compactionIndex + 1; i < path.length; i++) appendContextMessage(messages, path[i]!);
  } else {
    for (const entry of path) appendContextMessage(messages, entry);
  }
  if (!omp) return { messages, thinkingLevel, model };
  // omp's default role is pi's model: the later of a default model change and an assistant message.
  if (model?.provider !== undefined && model.modelId !== undefined) omp.models.default = `${model.provider}/${model.modelId}`;
  return { messages, thinkingLevel, model, omp };
}

/**
 * seed 003's build_session_context: the latest thinking-level and model changes of the whole
 * session ("scan all entries"); the last compaction on the path, its summary first, then the kept
 * tail from `firstKeptEntryId` and everything after it; message and branch entries only (its custom
 * messages are shown in a UI, not sent).
 */
function seed003Context(entries: readonly SessionEntry[], path: readonly SessionEntry[]): SessionContext {
  let thinkingLevel = "off";
  let model: ContextModel | null = null;
  for (const entry of entries) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") {
      model = typeof entry.model === "string" ? splitModel(entry.model) : { provider: entry.provider as string, modelId: entry.modelId as string };
    }
  }
  let compactionIndex = -1;
  for (let i = path.length - 1; i >= 0 && compactionIndex < 0; i--) if (path[i]!.type === "compaction") compactionIndex = i;
  const messages: AgentMessage[] = [];
  const add = (entry: SessionEntry) => {
    if (entry.type === "message" || entry.type === "branch_summary") appendContextMessage(messages, entry);
  };
  if (compactionIndex < 0) {
    for (const entry of path) add(entry);
    return { messages, thinkingLevel, model };
  }
  const compaction = path[compactionIndex] as CompactionEntry;
  messages.push(compactionSummaryMessage(compaction));
  const firstKept = path.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
  if (firstKept >= 0 && firstKept < compactionIndex) for (let i = firstKept; i < compactionIndex; i++) add(path[i]!);
  for (let i = compactionIndex + 1; i < path.length; i++) add(path[i]!);
  return { messages, thinkingLevel, model };
}

function appendContextMessage(messages: AgentMessage[], entry: SessionEntry): void {
  if (entry.type === "message") {
    messages.push(entry.message);
  } else if (entry.type === "custom_message") {
    messages.push({
      role: "custom",
      customType: entry.customType,
      content: entry.content,
      display: entry.display,
      details: entry.details,
      timestamp: Date.parse(entry.timestamp),
    });
  } else if (entry.type === "branch_summary" && entry.summary) {
    messages.push({ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: Date.parse(entry.timestamp) });
  }
}

function compactionSummaryMessage(entry: CompactionEntry): AgentMessage {
  return { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: Date.parse(entry.timestamp) };
}

function splitModel(model: string): ContextModel {
  const slash = model.indexOf("/");
  return slash < 0 ? { provider: "", modelId: model } : { provider: model.slice(0, slash), modelId: model.slice(slash + 1) };
}
