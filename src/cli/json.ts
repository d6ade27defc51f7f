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

/** `JSON.stringify(value)` for values of any depth; undefined where JSON.stringify gives undefined. */
export function stringifyJson(value: unknown): string | undefined {
  const root = toJsonValue(value, "");
  if (isOmitted(root)) return undefined;
  const out: string[] = [];
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
  return out.join("");
}
