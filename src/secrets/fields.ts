/**
 * Every place text lives in a session record: each string value, walked deeply (message text,
 * thinking, tool-call arguments, tool results, custom messages and data, summaries, labels,
 * session names, a header's title), named by a JSON pointer (`/message/content/2/arguments/command`).
 * Left out: what holds no text a person or agent wrote: a record's ids, type and timestamp, the
 * message's role, provider and model, image data (base64 or a blob ref) and providers' opaque
 * signatures.
 *
 * search/text.ts has the texts a search looks in, joined per source and without locations; a
 * secret may be in any string (a tool call's arguments, a result's `details`, an extension's
 * data), and redaction must put each replacement back where it was: hence a walk of its own.
 */

/** Keys of a record itself that are structure, not text. */
const RECORD_KEYS = new Set(["type", "id", "parentId", "timestamp", "version", "targetId", "fromId", "firstKeptEntryId"]);
/** Keys of a message entry's `message` that name things rather than say them. */
const MESSAGE_KEYS = new Set(["role", "api", "provider", "model", "stopReason", "toolCallId", "responseId", "timestamp"]);
/** Providers' opaque, signed blobs (of thinking, of text): not text, and not ours to change. */
const OPAQUE_KEYS = new Set(["thinkingSignature", "textSignature", "signature", "encrypted_content"]);

const escapeToken = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** A JSON pointer (RFC 6901) of path segments. */
function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((segment) => `/${escapeToken(String(segment))}`).join("");
}

function isImageData(text: string): boolean {
  return text.startsWith("blob:sha256:") || (text.startsWith("data:") && text.slice(0, 100).includes(";base64,"));
}

/**
 * Calls `visit` with each text of `record` and its path; where `visit` returns a string, that
 * replaces the text. Returns `record` itself when nothing was replaced, else a copy (only the
 * objects and arrays on the way to a replaced text are copied).
 */
export function mapTexts<T>(record: T, visit: (text: string, path: () => string) => string | undefined): T {
  const segments: (string | number)[] = [];
  const path = () => jsonPointer(segments);
  const walk = (value: unknown, parent: "record" | "message" | "other"): unknown => {
    if (typeof value === "string") {
      if (isImageData(value)) return value;
      const replaced = visit(value, path);
      return replaced === undefined ? value : replaced;
    }
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        segments.push(i);
        const next = walk(value[i], "other");
        segments.pop();
        if (next !== value[i]) (copy ??= value.slice())[i] = next;
      }
      return copy ?? value;
    }
    const object = value as Record<string, unknown>;
    const image = object.type === "image";
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(object)) {
      if (parent === "record" && RECORD_KEYS.has(key)) continue;
      if (parent === "message" && MESSAGE_KEYS.has(key)) continue;
      if (OPAQUE_KEYS.has(key) || (image && (key === "data" || key === "mimeType"))) continue;
      if (object.type === "toolCall" && key === "id") continue;
      segments.push(key);
      const next = walk(object[key], parent === "record" && key === "message" ? "message" : "other");
      segments.pop();
      if (next !== object[key]) (copy ??= { ...object })[key] = next;
    }
    return copy ?? object;
  };
  return walk(record, "record") as T;
}

/** Calls `visit` with each text of `record` and its path (see {@link mapTexts}). */
export function forEachText(record: unknown, visit: (text: string, path: () => string) => void): void {
  mapTexts(record, (text, path) => {
    visit(text, path);
    return undefined;
  });
}
