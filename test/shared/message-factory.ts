/**
 * Realistic pi messages from a seeded generator: user text (sometimes with a small image),
 * assistant turns with thinking + text + toolCall blocks and usage, tool results with long text
 * output. Content mixes code, prose, JSON-escaped characters and non-ASCII text, as real
 * sessions do, so that parsing and UTF-8 decoding cost what they cost in the field.
 */

export type Random = () => number;

/** mulberry32: small, fast, deterministic. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "session", "entry", "parent", "branch", "leaf", "compaction", "summary", "context", "storage", "append",
  "flush", "reader", "buffer", "offset", "header", "message", "assistant", "result", "thinking", "model",
  "provider", "config", "handler", "request", "response", "cache", "index", "worker", "queue", "stream",
  "the", "a", "of", "to", "and", "in", "is", "for", "that", "with", "this", "we", "it", "on", "be", "not",
];
const NON_ASCII = ["✔", "—", "→", "🚀", "日本語のテキスト", "Größe", "naïve", "…", "✅ done", "« ok »"];
const IDENTS = ["sessionManager", "readRange", "parseLine", "entryId", "leafId", "buildContext", "storagePort", "flushQueue", "toolCall", "byteOffset"];
const FILES = ["src/session/manager.ts", "src/format/reader.ts", "README.md", "package.json", "test/node/open.test.ts", "adapters/node-fs/index.ts", "docs/design.md"];
const TOOLS = ["read", "bash", "edit", "write", "grep"];
const MODELS: Array<{ api: string; provider: string; model: string }> = [
  { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
  { api: "openai-responses", provider: "openai", model: "gpt-5.1-codex" },
  { api: "openai-completions", provider: "deepseek", model: "deepseek-v4-pro" },
];

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function int(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Log-uniform: many small values, a long tail of large ones. */
function logUniform(random: Random, min: number, max: number): number {
  return Math.round(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
}

/** Draws one word of prose. */
export type WordSource = (random: Random) => string;

const benchWords: WordSource = (random) => pick(random, WORDS);

/**
 * A vocabulary of `size` made-up words drawn with Zipf's law (the k-th most frequent word with
 * weight 1/k), as words are in real text: a few very common, a long tail of rare ones. The search
 * benchmark needs such a spread; the other benchmarks keep their small vocabulary.
 */
export function zipfWords(size: number, seed: number): WordSource {
  const random = seededRandom(seed);
  const syllables = ["ka", "to", "ri", "men", "sal", "vo", "de", "nu", "pre", "lin", "gro", "sta", "che", "mo", "ber", "tiv", "ax", "qu", "el", "zon", "pa", "fi", "ru", "wen"];
  const seen = new Set<string>(WORDS);
  const words: string[] = [...WORDS];
  while (words.length < size) {
    let word = "";
    const n = int(random, 1, 4);
    for (let i = 0; i < n; i++) word += pick(random, syllables);
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let k = 0; k < size; k++) cumulative[k] = total += 1 / (k + 1);
  return (r) => {
    const target = r() * total;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
}

function sentence(random: Random, word: WordSource): string {
  const n = int(random, 6, 18);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(random() < 0.03 ? pick(random, NON_ASCII) : word(random));
  const text = words.join(" ");
  return text[0]!.toUpperCase() + text.slice(1) + ".";
}

function prose(random: Random, chars: number, word: WordSource): string {
  let out = "";
  while (out.length < chars) out += (out ? " " : "") + sentence(random, word) + (random() < 0.15 ? "\n\n" : "");
  return out.slice(0, chars);
}

function codeLine(random: Random, word: WordSource): string {
  const indent = "  ".repeat(int(random, 0, 3));
  switch (int(random, 0, 5)) {
    case 0:
      return `${indent}const ${pick(random, IDENTS)} = await ${pick(random, IDENTS)}.${pick(random, IDENTS)}("${word(random)}", ${int(random, 0, 9999)});`;
    case 1:
      return `${indent}if (${pick(random, IDENTS)} === null) throw new Error(\`${word(random)} \${${pick(random, IDENTS)}} not found\`);`;
    case 2:
      return `${indent}// ${sentence(random, word)}`;
    case 3:
      return `${indent}return { ${pick(random, IDENTS)}: ${int(random, 0, 99)}, path: "${pick(random, FILES)}", ok: ${random() < 0.5} };`;
    case 4:
      return `${indent}\t${pick(random, IDENTS)}.push('${word(random)}\\n', "${pick(random, NON_ASCII)}");`;
    default:
      return `${indent}}`;
  }
}

/** Tool output: a file listing with line numbers, or command output. */
function toolOutput(random: Random, chars: number, tool: string, word: WordSource): string {
  const lines: string[] = [];
  let size = 0;
  let n = 1;
  while (size < chars) {
    const line =
      tool === "bash"
        ? `[${int(random, 10, 23)}:${int(random, 10, 59)}:${int(random, 10, 59)}] ${pick(random, ["INFO", "WARN", "DEBUG"])} ${sentence(random, word)}`
        : `${String(n).padStart(5)}\t${codeLine(random, word)}`;
    lines.push(line);
    size += line.length + 1;
    n++;
  }
  return lines.join("\n").slice(0, chars);
}

/** A small PNG-sized image: random bytes, base64 (2–6 KB of base64). */
function smallImage(random: Random): { type: "image"; data: string; mimeType: string } {
  const bytes = Buffer.alloc(int(random, 1500, 4500));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return { type: "image", data: bytes.toString("base64"), mimeType: "image/png" };
}

export interface MessageSizes {
  userChars: [number, number];
  thinkingChars: [number, number];
  textChars: [number, number];
  /** Tool output chars, drawn log-uniformly. */
  toolOutputChars: [number, number];
  /** Chance that a user message carries a small image. */
  imageChance: number;
}

/** Shapes of a long working session: tool output dominates its size. */
export const SESSION_SIZES: MessageSizes = {
  userChars: [20, 1500],
  thinkingChars: [200, 2500],
  textChars: [40, 1200],
  toolOutputChars: [400, 60_000],
  imageChance: 0.004,
};

/** Messages of ~1–2 KB each once serialized, for the append benchmark. */
export const APPEND_SIZES: MessageSizes = {
  userChars: [700, 1500],
  thinkingChars: [300, 700],
  textChars: [100, 400],
  toolOutputChars: [800, 1700],
  imageChance: 0,
};

export interface ToolCallBlock {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** Generates messages in conversation order, with strictly increasing timestamps. */
export class MessageFactory {
  readonly #random: Random;
  readonly #sizes: MessageSizes;
  readonly #word: WordSource;
  #clock: number;
  #model = MODELS[0]!;
  #callSeq = 0;

  constructor(seed: number, sizes: MessageSizes, startMs = Date.UTC(2026, 0, 5, 9, 0, 0), word: WordSource = benchWords) {
    this.#random = seededRandom(seed);
    this.#sizes = sizes;
    this.#word = word;
    this.#clock = startMs;
  }

  get random(): Random {
    return this.#random;
  }

  #tick(): number {
    this.#clock += int(this.#random, 200, 40_000);
    return this.#clock;
  }

  switchModel(): { provider: string; model: string } {
    this.#model = pick(this.#random, MODELS);
    return this.#model;
  }

  user(): Record<string, unknown> {
    const text = prose(this.#random, int(this.#random, ...this.#sizes.userChars), this.#word);
    const content: unknown[] = [{ type: "text", text }];
    if (this.#random() < this.#sizes.imageChance) content.push(smallImage(this.#random));
    return { role: "user", content, timestamp: this.#tick() };
  }

  /** An assistant turn; with a tool call unless `final`. */
  assistant(final: boolean): { message: Record<string, unknown>; toolCall: ToolCallBlock | null } {
    const r = this.#random;
    const content: unknown[] = [
      { type: "thinking", thinking: prose(r, int(r, ...this.#sizes.thinkingChars), this.#word), thinkingSignature: "sig_" + Math.floor(r() * 1e12).toString(36) },
      { type: "text", text: prose(r, int(r, ...this.#sizes.textChars), this.#word) },
    ];
    let toolCall: ToolCallBlock | null = null;
    if (!final) {
      const name = pick(r, TOOLS);
      const args: Record<string, unknown> =
        name === "bash" ? { command: `npm test -- ${pick(r, FILES)} 2>&1 | tail -n ${int(r, 20, 200)}`, timeout: 120 } : { path: pick(r, FILES), offset: int(r, 1, 400) };
      toolCall = { type: "toolCall", id: `toolu_${(++this.#callSeq).toString(36)}${Math.floor(r() * 1e10).toString(36)}`, name, arguments: args };
      content.push(toolCall);
    }
    const input = int(r, 2000, 180_000);
    const output = int(r, 50, 8000);
    const cacheRead = int(r, 0, input);
    const message = {
      role: "assistant",
      content,
      api: this.#model.api,
      provider: this.#model.provider,
      model: this.#model.model,
      usage: {
        input,
        output,
        cacheRead,
        cacheWrite: 0,
        totalTokens: input + output + cacheRead,
        cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 + cacheRead * 3e-7 },
      },
      stopReason: final ? "stop" : "toolUse",
      timestamp: this.#tick(),
      responseId: `resp_${Math.floor(r() * 1e15).toString(36)}`,
    };
    return { message, toolCall };
  }

  toolResult(call: ToolCallBlock): Record<string, unknown> {
    const text = toolOutput(this.#random, logUniform(this.#random, ...this.#sizes.toolOutputChars), call.name, this.#word);
    return {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: "text", text }],
      details: call.name === "bash" ? { exitCode: this.#random() < 0.9 ? 0 : 1 } : undefined,
      isError: false,
      timestamp: this.#tick(),
    };
  }

  /** A compaction summary of a few KB. */
  summary(): string {
    const w = this.#word;
    return "## Goal\n" + prose(this.#random, 600, w) + "\n\n## Progress\n" + prose(this.#random, 1200, w) + "\n\n## Next steps\n" + prose(this.#random, 500, w);
  }

  /** `count` messages for appending: user, then (assistant + tool result) pairs, a final answer every few turns. */
  sequence(count: number): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    while (out.length < count) {
      out.push(this.user());
      const steps = int(this.#random, 1, 4);
      for (let s = 0; s < steps && out.length < count; s++) {
        const { message, toolCall } = this.assistant(false);
        out.push(message);
        if (out.length < count) out.push(this.toolResult(toolCall!));
      }
      if (out.length < count) out.push(this.assistant(true).message);
    }
    return out;
  }
}
