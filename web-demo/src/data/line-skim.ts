/**
 * What the viewer's index needs of a message line, read from its bytes without parsing it: an
 * assistant message's usage, model, tool call ids and whether it has text (the tree hides a
 * message that only calls tools), a tool result's call id (where the core's proof found it). The
 * line was proved valid JSON by the core (format/message-line.ts), so skipping a value needs no
 * checks: a string ends at the first quote after an even run of backslashes, found with `indexOf`.
 *
 * Members are read in order and a later one replaces an earlier one, as `JSON.parse` keeps the
 * last of duplicate keys; a key or a type written with escapes is decoded before it is compared.
 * Small values (usage, model, ids) are parsed with `JSON.parse`, so numbers and strings are exactly
 * what a full parse gives. A line that is not as expected gives null: the caller parses it.
 */
import { messageUsage, modelOf, type Usage } from "../../../src/insights/usage.js";

/** What the index keeps of an assistant message (the same from its bytes or from the parsed message). */
export interface AssistantFacts {
  usage: Usage | null;
  /** `provider/model`, as the header lists models. */
  model: string | undefined;
  /** No text, tool calls only, and the call did not fail: the tree hides it, as pi's does. */
  toolOnly: boolean;
  /** The id of each tool call block (undefined when it has no string id). */
  callIds: (string | undefined)[];
}

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;

/** An assistant message's facts from the parsed message (what the skim must equal). */
export function assistantFacts(message: Block): AssistantFacts {
  const callIds: (string | undefined)[] = [];
  let hasText = typeof message.content === "string" && message.content.trim() !== "";
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && typeof block.text === "string" && block.text.trim() !== "") hasText = true;
      if (block.type === "toolCall") callIds.push(typeof block.id === "string" ? block.id : undefined);
    }
  }
  return { usage: messageUsage(message), model: modelOf(message), toolOnly: !hasText && !failed(message.stopReason), callIds };
}

/** A stop reason other than a normal end or a tool call: the message failed (shown even without text). */
const failed = (stopReason: unknown) => typeof stopReason === "string" && stopReason !== "stop" && stopReason !== "toolUse";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const key = (name: string) => encoder.encode(name);
const CONTENT = key("content");
/** The assistant message's members the facts are made of, besides its content. */
const KEPT_MEMBERS = ["usage", "model", "provider", "stopReason"].map((name) => [name, key(name)] as const);
const TYPE = key("type");
const TEXT = key("text");
const ID = key("id");
const TYPE_TEXT = key('"text"');
const TYPE_TOOL_CALL = key('"toolCall"');

/** Thrown inside a skim when the line is not what it expects: the caller parses the line. */
class Unusual extends Error {}

function skipSpace(b: Uint8Array, i: number): number {
  let c = b[i];
  while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
  return i;
}

/** The index after the string whose opening quote is at `i`. */
function skipString(b: Uint8Array, i: number): number {
  for (let quote = b.indexOf(QUOTE, i + 1); quote >= 0; quote = b.indexOf(QUOTE, quote + 1)) {
    let k = quote - 1;
    while (b[k] === BACKSLASH) k--;
    if ((quote - 1 - k) % 2 === 0) return quote + 1;
  }
  throw new Unusual();
}

/** The index after the value starting at `i`. */
function skipValue(b: Uint8Array, i: number): number {
  const first = b[i];
  if (first === QUOTE) return skipString(b, i);
  if (first === LBRACE || first === LBRACKET) {
    let depth = 0;
    for (;;) {
      const c = b[i];
      if (c === QUOTE) {
        i = skipString(b, i);
        continue;
      }
      if (c === LBRACE || c === LBRACKET) depth++;
      else if (c === RBRACE || c === RBRACKET) {
        if (--depth === 0) return i + 1;
      } else if (c === undefined) throw new Unusual();
      i++;
    }
  }
  // A number or a literal: up to the next delimiter.
  for (;;) {
    const c = b[i];
    if (c === COMMA || c === RBRACE || c === RBRACKET || c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a || c === undefined) return i;
    i++;
  }
}

function hasBackslash(b: Uint8Array, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (b[k] === BACKSLASH) return true;
  return false;
}

function sameBytes(b: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[start + k] !== name[k]) return false;
  return true;
}

/**
 * The text of bytes [start, end): short ASCII runs (ids, models, usage) directly, which costs a
 * fraction of a TextDecoder call (made for each of a million lines, that call was most of a skim).
 */
function spanText(b: Uint8Array, start: number, end: number): string {
  if (end - start <= 512) {
    let k = start;
    while (k < end && b[k]! < 0x80) k++;
    if (k === end) return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
  }
  return decoder.decode(b.subarray(start, end));
}

/** The JSON value at [start, end); a string without escapes is read as it is. */
function parseSpan(b: Uint8Array, start: number, end: number): unknown {
  if (b[start] === QUOTE && !hasBackslash(b, start + 1, end - 1)) return spanText(b, start + 1, end - 1);
  return JSON.parse(spanText(b, start, end));
}

/** A key: its name's UTF-8 in `bytes` from `start` to `end` (the line's bytes, or the decoded name of a key written with escapes). */
interface Key {
  bytes: Uint8Array;
  start: number;
  end: number;
}

const isKey = (key: Key, name: Uint8Array) => sameBytes(key.bytes, key.start, key.end, name);

/**
 * Calls `member(key, valueStart)` for each member of the object from `i` (just after its "{", or
 * after a member already read), which returns the index after the value; returns the index after
 * the object's "}".
 */
function forEachMember(b: Uint8Array, i: number, member: (key: Key, valueStart: number) => number): number {
  i = skipSpace(b, i);
  if (b[i] === RBRACE) return i + 1;
  if (b[i] === COMMA) i = skipSpace(b, i + 1);
  const key: Key = { bytes: b, start: 0, end: 0 };
  for (;;) {
    if (b[i] !== QUOTE) throw new Unusual();
    const keyEnd = skipString(b, i) - 1;
    if (hasBackslash(b, i + 1, keyEnd)) {
      key.bytes = encoder.encode(String(parseSpan(b, i, keyEnd + 1)));
      key.start = 0;
      key.end = key.bytes.length;
    } else {
      key.bytes = b;
      key.start = i + 1;
      key.end = keyEnd;
    }
    const colon = skipSpace(b, keyEnd + 1);
    if (b[colon] !== COLON) throw new Unusual();
    i = skipSpace(b, member(key, skipSpace(b, colon + 1)));
    if (b[i] === RBRACE) return i + 1;
    if (b[i] !== COMMA) throw new Unusual();
    i = skipSpace(b, i + 1);
  }
}

/** Whether the JSON string at [start, end) (quotes included) has a character `trim()` keeps. */
function stringHasText(b: Uint8Array, start: number, end: number): boolean {
  // Most texts start with a printable ASCII character; otherwise the string decides.
  const c = b[start + 1];
  if (c !== undefined && c > 0x20 && c < 0x7f && c !== BACKSLASH && c !== QUOTE) return true;
  const text = parseSpan(b, start, end);
  return typeof text === "string" && text.trim() !== "";
}

/** Where a proved message line's message object goes on after its role (format/message-line.ts reads `…"timestamp":"<t>","message":{"role":"<role>"`). */
export function afterRole(timestampEnd: number, role: string): number {
  return timestampEnd + '","message":{"role":"'.length + role.length + 1;
}

/**
 * The facts of the assistant message whose members go on at `i` (after its role) in the proved
 * line `b`; null when the line should be parsed instead.
 */
export function skimAssistant(b: Uint8Array, i: number): AssistantFacts | null {
  const message: Block = { role: "assistant" };
  const content: { hasText: boolean; callIds: (string | undefined)[] } = { hasText: false, callIds: [] };
  try {
    forEachMember(b, i, (key, value) => {
      if (isKey(key, CONTENT)) {
        content.hasText = false;
        content.callIds = [];
        const end = skipValue(b, value);
        if (b[value] === QUOTE) content.hasText = stringHasText(b, value, end);
        else if (b[value] === LBRACKET) readContent(b, value + 1, (text) => (content.hasText ||= text), (id) => content.callIds.push(id));
        return end;
      }
      const end = skipValue(b, value);
      for (const [name, bytes] of KEPT_MEMBERS) if (isKey(key, bytes)) message[name] = parseSpan(b, value, end);
      return end;
    });
  } catch (error) {
    if (error instanceof Unusual) return null;
    throw error;
  }
  return { usage: messageUsage(message), model: modelOf(message), toolOnly: !content.hasText && !failed(message.stopReason), callIds: content.callIds };
}

/** The blocks of a content array from `i` (after its "["): each text block's "has text", each tool call's id. */
function readContent(b: Uint8Array, i: number, onText: (hasText: boolean) => void, onCall: (id: string | undefined) => void): void {
  i = skipSpace(b, i);
  if (b[i] === RBRACKET) return;
  for (;;) {
    if (b[i] === LBRACE) {
      const block: { type: "text" | "toolCall" | "other" | null; text: boolean | null; id: string | undefined } = { type: null, text: null, id: undefined };
      i = forEachMember(b, i + 1, (key, value) => {
        const end = skipValue(b, value);
        if (isKey(key, TYPE)) {
          // A type written with escapes ("t\u0065xt") is decoded first.
          const type = hasBackslash(b, value, end) ? parseSpan(b, value, end) : sameBytes(b, value, end, TYPE_TEXT) ? "text" : sameBytes(b, value, end, TYPE_TOOL_CALL) ? "toolCall" : "other";
          block.type = type === "text" || type === "toolCall" ? type : "other";
        } else if (isKey(key, TEXT)) block.text = b[value] === QUOTE ? stringHasText(b, value, end) : null;
        else if (isKey(key, ID)) block.id = stringOrUndefined(parseSpan(b, value, end));
        return end;
      });
      if (block.type === "text" && block.text !== null) onText(block.text);
      if (block.type === "toolCall") onCall(block.id);
    } else {
      i = skipValue(b, i);
    }
    i = skipSpace(b, i);
    if (b[i] === RBRACKET) return;
    if (b[i] !== COMMA) throw new Unusual();
    i = skipSpace(b, i + 1);
  }
}

const stringOrUndefined = (value: unknown) => (typeof value === "string" ? value : undefined);

/** A tool result's call id from where the core found it in the line (MessageLineHead.toolCallIdStart, -End: -1 for none). */
export function toolCallIdAt(b: Uint8Array, start: number, end: number): string | undefined {
  if (start < 0) return undefined;
  return hasBackslash(b, start, end) ? (parseSpan(b, start - 1, end + 1) as string) : spanText(b, start, end);
}
