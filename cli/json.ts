/**
 * JSON text exactly as `JSON.stringify(value)` gives it, built without recursion: a session tree
 * is a chain as deep as the session is long, and V8's JSON.stringify overflows the stack at a
 * depth of a few thousand.
 */

type Frame =
  | { kind: "array"; items: readonly unknown[]; index: number }
  | { kind: "object"; record: Record<string, unknown>; keys: string[]; index: number; empty: boolean };

/** What JSON.stringify serializes after `toJSON`; undefined, functions and symbols are left out. */
function toJsonValue(value: unknown, key: string): unknown {
  if (value !== null && (typeof value === "object" || typeof value === "bigint")) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return toJSON.call(value, key);
  }
  return value;
}

function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/** Plain objects and arrays are walked here; everything else (primitives, boxed values) is a leaf. */
function isContainer(value: unknown): value is object {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt)
  );
}

/** Text is handed to the writer in pieces of about this many characters. */
const CHUNK_CHARS = 1 << 20;

/**
 * Writes the text of `JSON.stringify(value)` in chunks (so no single string holds the output of
 * a huge session). Returns false, writing nothing, where JSON.stringify gives undefined.
 */
export function writeJson(value: unknown, write: (chunk: string) => void): boolean {
  const root = toJsonValue(value, "");
  if (isOmitted(root)) return false;
  let buffered: string[] = [];
  let bufferedChars = 0;
  const out = {
    push(text: string) {
      buffered.push(text);
      bufferedChars += text.length;
      if (bufferedChars >= CHUNK_CHARS) this.flush();
    },
    flush() {
      if (buffered.length > 0) write(buffered.join(""));
      buffered = [];
      bufferedChars = 0;
    },
  };
  const stack: Frame[] = [];

  const emit = (item: unknown) => {
    if (!isContainer(item)) {
      out.push(JSON.stringify(item));
    } else if (Array.isArray(item)) {
      out.push("[");
      stack.push({ kind: "array", items: item, index: 0 });
    } else {
      out.push("{");
      stack.push({ kind: "object", record: item as Record<string, unknown>, keys: Object.keys(item), index: 0, empty: true });
    }
  };

  emit(root);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.kind === "array") {
      if (frame.index === frame.items.length) {
        stack.pop();
        out.push("]");
        continue;
      }
      const i = frame.index++;
      if (i > 0) out.push(",");
      const item = toJsonValue(frame.items[i], String(i));
      if (isOmitted(item)) out.push("null");
      else emit(item);
      continue;
    }
    let emitted = false;
    while (frame.index < frame.keys.length && !emitted) {
      const key = frame.keys[frame.index++]!;
      const item = toJsonValue(frame.record[key], key);
      if (isOmitted(item)) continue;
      out.push(`${frame.empty ? "" : ","}${JSON.stringify(key)}:`);
      frame.empty = false;
      emit(item);
      emitted = true;
    }
    if (!emitted) {
      stack.pop();
      out.push("}");
    }
  }
  out.flush();
  return true;
}

/** `JSON.stringify(value)` for values of any depth. */
export function stringifyJson(value: unknown): string | undefined {
  const chunks: string[] = [];
  return writeJson(value, (chunk) => chunks.push(chunk)) ? chunks.join("") : undefined;
}
