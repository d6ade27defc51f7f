/**
 * buildSessionContext: what a session sends to the model, walking root → leaf. Matches pi
 * exactly; omp's extra state (models by role, TTSR rules, mode) is added only when omp entries
 * are on the path.
 */
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
 * `leafId === null` → empty context; an unknown or absent leaf → the last entry.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId: ReadonlyMap<string, SessionEntry> = indexById(entries),
): SessionContext {
  if (leafId === null) return { messages: [], thinkingLevel: "off", model: null };
  const leaf = (leafId ? byId.get(leafId) : undefined) ?? entries[entries.length - 1];
  if (!leaf) return { messages: [], thinkingLevel: "off", model: null };
  const path = pathToRoot(leaf, byId);

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
