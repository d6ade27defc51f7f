/**
 * Prompt history (oh-my-pi's HistoryStorage, seed 000) on any StoragePort: the prompts a user
 * typed, newest first, searchable by word prefixes. Ours are appended as JSON lines to
 * `prompt-history.jsonl` beside sessions/; an oh-my-pi `history.db` in the same place is read too
 * (never written), so a user's history comes along. The seed's rules are on each method.
 */
import { scanJsonl } from "../format/jsonl-reader.js";
import type { StoragePort } from "../port.js";
import { HISTORY_DB, readHistoryDb, type HistoryEntry, type HistoryError } from "./history-db.js";

export const PROMPT_HISTORY_FILE = "prompt-history.jsonl";
const MAX_LIMIT = 1000;

/**
 * Where {@link PromptHistory.open} finds the history, and where write failures go.
 * @category Prompt history
 */
export interface PromptHistoryOptions {
  /** Our history file (default prompt-history.jsonl). */
  file?: string;
  /** oh-my-pi's database to read as well (default history.db); false: none. */
  historyDb?: string | false;
  /** A write that failed (add never throws). */
  onError?: (error: unknown) => void;
}

/** The seed's limit rule: floor, clamp to 0–1000, anything not finite is 0. */
function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 0;
  return Math.min(Math.max(0, Math.floor(limit)), MAX_LIMIT);
}

/** Tokens as FTS5's unicode61 tokenizer makes them (remove_diacritics 1, lower case). */
function historyTokens(text: string): string[] {
  return (
    text
      .normalize("NFD")
      .replace(/\p{Mn}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{Co}]+/gu) ?? []
  );
}

/** True when `tokens` hold `phrase` in a row, its last token as a prefix. */
function holdsPrefixPhrase(tokens: readonly string[], phrase: readonly string[]): boolean {
  const last = phrase.length - 1;
  for (let start = 0; start + phrase.length <= tokens.length; start++) {
    let i = 0;
    while (i < last && tokens[start + i] === phrase[i]) i++;
    if (i === last && tokens[start + last]!.startsWith(phrase[last]!)) return true;
  }
  return false;
}

const newestFirst = (a: HistoryEntry, b: HistoryEntry) => b.created_at - a.created_at || b.id - a.id;

/**
 * The prompts a user typed, newest first and searchable by word prefixes, kept in
 * `prompt-history.jsonl` on any StoragePort; an oh-my-pi `history.db` in the same place is read
 * too (never written), so a user's history comes along. Open one with {@link PromptHistory.open}.
 * @category Prompt history
 */
export class PromptHistory {
  readonly #storage: StoragePort;
  readonly #file: string;
  readonly #onError: ((error: unknown) => void) | undefined;
  /** Every entry, in the order stored (imported rows first, then ours by id). */
  readonly #entries: HistoryEntry[];
  readonly #tokens = new WeakMap<HistoryEntry, string[]>();
  #lastPrompt: string | null;
  #nextId: number;
  #writes: Promise<void> = Promise.resolve();
  /** Why history.db could not be read (its rows are then missing); undefined when it was read or absent. */
  readonly importError: HistoryError | undefined;

  private constructor(storage: StoragePort, file: string, entries: HistoryEntry[], lastPrompt: string | null, importError: HistoryError | undefined, onError?: (error: unknown) => void) {
    this.#storage = storage;
    this.#file = file;
    this.#entries = entries;
    this.#lastPrompt = lastPrompt;
    this.#nextId = entries.reduce((max, entry) => Math.max(max, entry.id), 0) + 1;
    this.importError = importError;
    this.#onError = onError;
  }

  /**
   * Reads our history file and, when present, oh-my-pi's history.db. A damaged history.db does
   * not fail the open: its rows are left out and `importError` says why. A line of our file that
   * is not a history entry is skipped.
   */
  static async open(storage: StoragePort, options: PromptHistoryOptions = {}): Promise<PromptHistory> {
    const file = options.file ?? PROMPT_HISTORY_FILE;
    let imported: HistoryEntry[] = [];
    let importError: HistoryError | undefined;
    if (options.historyDb !== false) {
      try {
        imported = await readHistoryDb(storage, options.historyDb ?? HISTORY_DB);
      } catch (error) {
        if ((error as Error).name !== "HistoryError") throw error;
        importError = error as HistoryError;
      }
    }
    const ours: HistoryEntry[] = [];
    await scanJsonl(storage, file, (record) => {
      const { id, prompt, created_at: createdAt, cwd } = record;
      if (typeof id !== "number" || typeof prompt !== "string" || typeof createdAt !== "number") return;
      ours.push(typeof cwd === "string" ? { id, prompt, created_at: createdAt, cwd } : { id, prompt, created_at: createdAt });
    });
    // The last prompt added: ours when we have any (they follow the import), else history.db's by id.
    const last = ours.at(-1) ?? imported.reduce<HistoryEntry | undefined>((best, entry) => (!best || entry.id > best.id ? entry : best), undefined);
    return new PromptHistory(storage, file, [...imported, ...ours], last?.prompt ?? null, importError, options.onError);
  }

  /**
   * Records a prompt, trimmed. An empty prompt, or one equal to the last prompt added (at first the
   * newest one stored), is skipped. Returns at once: the write runs behind it and a failure goes to
   * `onError`, never to the caller ({@link PromptHistory.flush} waits for it).
   */
  add(prompt: string, cwd?: string): void {
    const trimmed = prompt.trim();
    if (!trimmed || trimmed === this.#lastPrompt) return;
    this.#lastPrompt = trimmed;
    const entry: HistoryEntry = { id: this.#nextId++, prompt: trimmed, created_at: Math.floor(Date.now() / 1000), ...(cwd !== undefined ? { cwd } : {}) };
    this.#entries.push(entry);
    const line = new TextEncoder().encode(`${JSON.stringify(entry)}\n`);
    this.#writes = this.#writes.then(() => this.#storage.append(this.#file, line)).catch((error: unknown) => this.#onError?.(error));
  }

  /** Resolves when every prompt added so far is written (or its failure reported). */
  flush(): Promise<void> {
    return this.#writes;
  }

  /**
   * The `limit` newest prompts, newest first (by created_at, then id). `limit` is floored and
   * clamped to 0–1000; one that is not a finite number gives none.
   */
  recent(limit: number): HistoryEntry[] {
    const safeLimit = clampLimit(limit);
    if (safeLimit === 0) return [];
    return [...this.#entries].sort(newestFirst).slice(0, safeLimit);
  }

  /**
   * The `limit` newest prompts that hold every whitespace-separated word of `query`, newest
   * first. Matching is oh-my-pi's, FTS5's `"word"*` against history_fts (unicode61: case and
   * diacritics folded, letters and digits form tokens): the word's tokens appear in the prompt in a
   * row, the last one as the start of a word ("Sess" finds "session log"). A word without letters
   * or digits is ignored; a query of only such words finds nothing. `limit` is clamped as in
   * {@link PromptHistory.recent}.
   */
  search(query: string, limit: number): HistoryEntry[] {
    const safeLimit = clampLimit(limit);
    if (safeLimit === 0) return [];
    const phrases = query
      .trim()
      .split(/\s+/)
      .map(historyTokens)
      .filter((tokens) => tokens.length > 0);
    if (phrases.length === 0) return [];
    const found = this.#entries.filter((entry) => {
      const tokens = this.#tokensOf(entry);
      return phrases.every((phrase) => holdsPrefixPhrase(tokens, phrase));
    });
    return found.sort(newestFirst).slice(0, safeLimit);
  }

  #tokensOf(entry: HistoryEntry): string[] {
    let tokens = this.#tokens.get(entry);
    if (!tokens) {
      tokens = historyTokens(entry.prompt);
      this.#tokens.set(entry, tokens);
    }
    return tokens;
  }
}
