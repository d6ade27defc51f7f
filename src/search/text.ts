/**
 * What the search index holds of an entry: the text of a message, by source. User and assistant
 * text are searched by default; thinking and tool output on request.
 */

/**
 * A kind of text a search can look in: what the user typed, the assistant's replies, its thinking,
 * or tool output (tool results and `!command` runs).
 * @category Search
 */
export type SearchSource = "user" | "assistant" | "thinking" | "tool";
/**
 * Every {@link SearchSource}.
 * @category Search
 */
export const SEARCH_SOURCES: readonly SearchSource[] = ["user", "assistant", "thinking", "tool"];
/**
 * What a search looks in unless `sources` says otherwise: user and assistant text.
 * @category Search
 */
export const DEFAULT_SOURCES: readonly SearchSource[] = ["user", "assistant"];

export interface EntryText {
  source: SearchSource;
  /** The message's role: user, assistant, toolResult or bashExecution. */
  role: string;
  text: string;
}

function blockTexts(content: unknown, type: "text" | "thinking"): string {
  if (typeof content === "string") return type === "text" ? content : "";
  if (!Array.isArray(content)) return "";
  const field = type === "text" ? "text" : "thinking";
  const parts: string[] = [];
  for (const block of content) {
    if (block && typeof block === "object" && (block as { type?: unknown }).type === type) {
      const value = (block as Record<string, unknown>)[field];
      if (typeof value === "string" && value !== "") parts.push(value);
    }
  }
  return parts.join("\n");
}

/** The texts of one record (a message entry), by source; [] for anything else. */
export function entryTexts(record: Record<string, unknown>): EntryText[] {
  if (record.type !== "message") return [];
  const message = record.message as Record<string, unknown> | undefined;
  if (!message || typeof message !== "object") return [];
  const role = message.role;
  const out: EntryText[] = [];
  const add = (source: SearchSource, text: string) => {
    if (text.trim() !== "") out.push({ source, role: role as string, text });
  };
  switch (role) {
    case "user":
      add("user", blockTexts(message.content, "text"));
      break;
    case "assistant":
      add("assistant", blockTexts(message.content, "text"));
      add("thinking", blockTexts(message.content, "thinking"));
      break;
    case "toolResult":
      add("tool", blockTexts(message.content, "text"));
      break;
    case "bashExecution":
      // pi's `!command`: the command the user ran and what it printed.
      add("tool", [message.command, message.output].filter((part) => typeof part === "string").join("\n"));
      break;
  }
  return out;
}
