/**
 * JSON text exactly as `JSON.stringify(value)` gives it, built without recursion where it must be:
 * a session tree is a chain as deep as the session is long, and V8's JSON.stringify overflows the
 * stack at a depth of a few thousand. Values two levels down (a context's messages) and the items
 * of an array one level down (a listing's sessions, search hits) go to JSON.stringify, several
 * times faster than the walk here (a listing of 300 sessions: ~1 ms, against ~10 ms field by
 * field), unless it overflows: then that value and everything under it is walked.
 */

type Frame = { walkAll: boolean } & (
  | { kind: "array"; items: readonly unknown[]; index: number }
  | { kind: "object"; record: Record<string, unknown>; keys: string[]; index: number; empty: boolean }
);

/** Containers this deep (the root is 0), or items of an array, are tried with JSON.stringify first. */
const STRINGIFY_DEPTH = 2;

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

  /** `walkAll`: an enclosing value overflowed JSON.stringify, so this one would too. */
  const emit = (item: unknown, walkAll: boolean) => {
    if (!isContainer(item)) {
      out.push(JSON.stringify(item));
      return;
    }
    const tried = stack.length >= STRINGIFY_DEPTH || stack[stack.length - 1]?.kind === "array";
    if (!walkAll && tried && typeof (item as { toJSON?: unknown }).toJSON !== "function") {
      const text = stringifyWithinLimits(item);
      if (text !== undefined) {
        out.push(text);
        return;
      }
      walkAll = true;
    }
    if (Array.isArray(item)) {
      out.push("[");
      stack.push({ kind: "array", items: item, index: 0, walkAll });
    } else {
      out.push("{");
      stack.push({ kind: "object", record: item as Record<string, unknown>, keys: Object.keys(item), index: 0, empty: true, walkAll });
    }
  };

  emit(root, false);
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
      else emit(item, frame.walkAll);
      continue;
    }
    let emitted = false;
    while (frame.index < frame.keys.length && !emitted) {
      const key = frame.keys[frame.index++]!;
      const item = toJsonValue(frame.record[key], key);
      if (isOmitted(item)) continue;
      out.push(`${frame.empty ? "" : ","}${JSON.stringify(key)}:`);
      frame.empty = false;
      emit(item, frame.walkAll);
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

/** JSON.stringify's text, or undefined when it overflows the stack or the longest string. */
function stringifyWithinLimits(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** `JSON.stringify(value)` for values of any depth. */
export function stringifyJson(value: unknown): string | undefined {
  const chunks: string[] = [];
  return writeJson(value, (chunk) => chunks.push(chunk)) ? chunks.join("") : undefined;
}
