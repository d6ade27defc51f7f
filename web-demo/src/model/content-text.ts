/**
 * The text of a message's content (a string, or blocks of which the text ones count). A module of
 * its own because the model (tool-only results), the filters (search) and the renderers all read
 * it: in filters.ts it made filters.ts and session-model.ts import each other.
 */

/** The text blocks of message content, joined. */
export function contentText(content: unknown, separator = ""): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) if (typeof block === "object" && block !== null && block.type === "text" && typeof block.text === "string") parts.push(block.text);
  return parts.join(separator);
}
