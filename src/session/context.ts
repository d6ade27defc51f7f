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
  LeafEntry,
  MessageEntry,
  ModeChangeEntry,
  ModelChangeEntry,
  SessionContext,
  SessionEntry,
  ThinkingLevelChangeEntry,
  TtsrInjectionEntry,
} from "../format/types.js";

const OMP_TYPES = new Set(["ttsr_injection", "mode_change", "session_init"]);
/** The entry types that put a message into the context. */
const CONTEXT_TYPES = new Set(["message", "custom_message", "branch_summary"]);

/** What the tree and the path need of an entry; a whole entry is one too. */
export interface EntryHead {
  type: string;
  id: string;
  parentId?: string | null;
  timestamp: string;
}

/**
 * A session's entries as the context reads them: each entry's head in file order and by id, and
 * the whole entry only where the context needs it (so a source may build entries on demand).
 */
export interface EntrySource<H extends EntryHead> {
  readonly heads: readonly H[];
  readonly byId: ReadonlyMap<string, H>;
  entry(head: H): SessionEntry;
  /** The role of a message entry's message. */
  role(head: H): string | undefined;
}

/** The entries themselves as a source. */
function entriesSource(entries: readonly SessionEntry[], byId: ReadonlyMap<string, SessionEntry>): EntrySource<SessionEntry> {
  return { heads: entries, byId, entry: (entry) => entry, role: (entry) => (entry.type === "message" ? entry.message?.role : undefined) };
}

/** The root → `leaf` path; stops at a missing parent, and before an entry seen already (a cycle). */
export function pathToRoot<H extends EntryHead>(leaf: H | undefined, byId: ReadonlyMap<string, H>): H[] {
  // From an indexed leaf, a walk without a cycle meets each indexed entry once at most, so it is no
  // longer than the index: only a longer walk (or a leaf the index names otherwise, under a
  // duplicate id) needs to remember where it has been.
  if (leaf && byId.get(leaf.id) !== leaf) return pathToRootRemembering(leaf, byId);
  const path: H[] = [];
  for (let current = leaf; current; current = current.parentId ? byId.get(current.parentId) : undefined) {
    if (path.length > byId.size) return pathToRootRemembering(leaf!, byId);
    path.push(current);
  }
  return path.reverse();
}

function pathToRootRemembering<H extends EntryHead>(leaf: H, byId: ReadonlyMap<string, H>): H[] {
  const path: H[] = [];
  const seen = new Set<string>();
  for (let current: H | undefined = leaf; current && !seen.has(current.id); ) {
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
function lastLeafIdOf<H extends EntryHead>(source: EntrySource<H>): string | null {
  for (let i = source.heads.length - 1; i >= 0; i--) {
    const head = source.heads[i]!;
    if (head.type !== "leaf") return head.id;
    const targetId = (source.entry(head) as LeafEntry).targetId;
    if (source.byId.has(targetId)) return targetId;
  }
  return null;
}

/**
 * Options of {@link buildSessionContext}.
 * @category Sessions
 */
export interface ContextOptions {
  /** The dialect of the file the entries come from: seed 003 has its own rules. Default "pi". */
  dialect?: SessionDialect;
}

/**
 * What the model sees at `leafId`, as pi builds it: the messages on the path from the root, with
 * compactions and branch summaries applied, and the thinking level and model in effect there.
 * `leafId === null` → empty context; an unknown or absent leaf → the last entry (see `lastLeafIdOf`).
 *
 * @param byId the entries by id, when the caller has that map already
 * @category Sessions
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId: ReadonlyMap<string, SessionEntry> = indexById(entries),
  options: ContextOptions = {},
): SessionContext {
  return buildContextOf(entriesSource(entries, byId), leafId, options);
}

/**
 * buildSessionContext over a source: the same context, reading whole entries only for the messages
 * it returns, the settings it keeps and the last assistant message before the leaf (the model).
 */
export function buildContextOf<H extends EntryHead>(source: EntrySource<H>, leafId?: string | null, options: ContextOptions = {}): SessionContext {
  if (leafId === null) return { messages: [], thinkingLevel: "off", model: null };
  const fallback = lastLeafIdOf(source);
  const leaf = (leafId ? source.byId.get(leafId) : undefined) ?? (fallback === null ? undefined : source.byId.get(fallback));
  if (!leaf) return { messages: [], thinkingLevel: "off", model: null };
  const path = pathToRoot(leaf, source.byId);
  if (options.dialect === "seed003") return seed003Context(source, path);

  let thinkingLevel = "off";
  let model: ContextModel | null = null;
  /** The last assistant message since the model was last set: it sets the model (read at the end). */
  let modelFrom: H | null = null;
  let compactionAt = -1;
  let omp: NonNullable<SessionContext["omp"]> | undefined;
  const ompState = () => (omp ??= { models: {}, injectedTtsrRules: [], mode: "none" });

  for (let i = 0; i < path.length; i++) {
    const head = path[i]!;
    switch (head.type) {
      case "thinking_level_change":
        thinkingLevel = (source.entry(head) as ThinkingLevelChangeEntry).thinkingLevel;
        break;
      case "model_change": {
        const entry = source.entry(head) as ModelChangeEntry;
        if (typeof entry.model === "string") {
          // omp: "provider/modelId" per role; the default role is the model in pi's sense.
          const role = entry.role ?? "default";
          ompState().models[role] = entry.model;
          if (role === "default") {
            model = splitModel(entry.model);
            modelFrom = null;
          }
        } else {
          model = { provider: entry.provider as string, modelId: entry.modelId as string };
          modelFrom = null;
        }
        break;
      }
      case "message":
        if (source.role(head) === "assistant") modelFrom = head;
        break;
      case "compaction":
        compactionAt = i;
        break;
      case "ttsr_injection": {
        const rules = ompState().injectedTtsrRules;
        for (const rule of (source.entry(head) as TtsrInjectionEntry).injectedRules) if (!rules.includes(rule)) rules.push(rule);
        break;
      }
      case "mode_change": {
        const entry = source.entry(head) as ModeChangeEntry;
        ompState().mode = entry.mode;
        ompState().modeData = entry.data;
        break;
      }
      default:
        if (OMP_TYPES.has(head.type)) ompState();
    }
  }
  if (modelFrom) {
    const message = (source.entry(modelFrom) as MessageEntry).message;
    model = { provider: message.provider as string, modelId: message.model as string };
  }

  const messages: AgentMessage[] = [];
  const add = (head: H) => {
    if (CONTEXT_TYPES.has(head.type)) appendContextMessage(messages, source.entry(head));
  };
  if (compactionAt >= 0) {
    const compaction = source.entry(path[compactionAt]!) as CompactionEntry;
    messages.push(compactionSummaryMessage(compaction));
    let kept = false;
    for (let i = 0; i < compactionAt; i++) {
      const head = path[i]!;
      if (head.id === compaction.firstKeptEntryId) kept = true;
      if (kept) add(head);
    }
    for (let i = compactionAt + 1; i < path.length; i++) add(path[i]!);
  } else {
    for (const head of path) add(head);
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
function seed003Context<H extends EntryHead>(source: EntrySource<H>, path: readonly H[]): SessionContext {
  let thinkingLevel = "off";
  let model: ContextModel | null = null;
  for (const head of source.heads) {
    if (head.type === "thinking_level_change") thinkingLevel = (source.entry(head) as ThinkingLevelChangeEntry).thinkingLevel;
    else if (head.type === "model_change") {
      const entry = source.entry(head) as ModelChangeEntry;
      model = typeof entry.model === "string" ? splitModel(entry.model) : { provider: entry.provider as string, modelId: entry.modelId as string };
    }
  }
  let compactionIndex = -1;
  for (let i = path.length - 1; i >= 0 && compactionIndex < 0; i--) if (path[i]!.type === "compaction") compactionIndex = i;
  const messages: AgentMessage[] = [];
  const add = (head: H) => {
    if (head.type === "message" || head.type === "branch_summary") appendContextMessage(messages, source.entry(head));
  };
  if (compactionIndex < 0) {
    for (const head of path) add(head);
    return { messages, thinkingLevel, model };
  }
  const compaction = source.entry(path[compactionIndex]!) as CompactionEntry;
  messages.push(compactionSummaryMessage(compaction));
  const firstKept = path.findIndex((head) => head.id === compaction.firstKeptEntryId);
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
