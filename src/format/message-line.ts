/**
 * Proves from its bytes alone that one line of a session file is a valid `message` entry, and reads
 * its `id`, `parentId`, `timestamp` and the message's `role` without decoding or parsing the line.
 * Any line it cannot prove (another field order or entry type, an escape where a name is read,
 * anything unusual) gives null and is parsed in full: a proof may be missed, never be wrong. What
 * the proof checks and why that suffices: docs/DESIGN.md §3 ("Lazy entries").
 */
import { BLOB_REF_PREFIX } from "../blobs/blob-store.js";

/** What a proved message line holds for the index. */
export interface MessageLineHead {
  id: string;
  parentId: string | null;
  /** Where the timestamp's characters are (printable ASCII): most entries never need it as a string. */
  timestampStart: number;
  timestampEnd: number;
  role: string;
  /** Some string value may be a blob ref (decoded, it starts with "blob:sha256:"). */
  blobRef: boolean;
  /**
   * Where the message's `toolCallId` string is (its characters, escapes as written; the last one,
   * as JSON.parse keeps it), or -1 when the message has none or it is not a string: a tool
   * result's call, read without parsing the line.
   */
  toolCallIdStart: number;
  toolCallIdEnd: number;
  /** Where the message's own `timestamp` number is (the last one, as JSON.parse keeps it), or -1 when it has none. */
  messageTimestampStart: number;
  messageTimestampEnd: number;
  /**
   * The message's `content` (the last one): absent, a string, an array with no `null` item, or
   * anything else (an object, a number, an array holding a `null`): what a listing's text extraction
   * needs to know to take the line without parsing it (session-info.ts throws on the last kind).
   */
  content: MessageContentShape;
  /** The index of the line's "\n". */
  end: number;
}

type MessageContentShape = "absent" | "string" | "array" | "other";

/** How a dialect spells a message line: the parent key, and the top-level keys that refuse a proof. */
export interface MessageLineShape {
  /** `{"type":"message","id":"` … `","<parentKey>":` */
  readonly prefix: Uint8Array;
  readonly parentKey: Uint8Array;
  /** Top-level keys that, appearing again or at all after `message`, make the full parse decide. */
  readonly refusedKeys: ReadonlySet<string>;
}

const encoder = new TextEncoder();

/** The shape of message lines in a dialect whose parent key is `parentKey`. */
export function messageLineShape(parentKey: string, otherRefusedKeys: Iterable<string> = []): MessageLineShape {
  return {
    prefix: encoder.encode('{"type":"message","id":"'),
    parentKey: encoder.encode(`","${parentKey}":`),
    refusedKeys: new Set(["type", "id", parentKey, "timestamp", "message", ...otherRefusedKeys]),
  };
}

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;

/** Bytes that end a run of plain string content: '"', '\\' and the control characters. */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** The characters JSON allows after a backslash, other than 'u'. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

const HEX = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEX[c.charCodeAt(0)] = 1;

const TIMESTAMP_FIELD = encoder.encode(',"timestamp":"');
const MESSAGE_ROLE_FIELD = encoder.encode('","message":{"role":"');
const BLOB_PREFIX = encoder.encode(BLOB_REF_PREFIX);
const NULL = encoder.encode("null");
const TRUE = encoder.encode("true");
const FALSE = encoder.encode("false");
const ROLE = encoder.encode("role");
const TIMESTAMP = encoder.encode("timestamp");
const TOOL_CALL_ID = encoder.encode("toolCallId");
const CONTENT = encoder.encode("content");

/** Strings read into the head are short; a longer one is left to the full parse. */
const MAX_PLAIN = 1024;
/** Deeper nesting is left to the full parse (JSON.parse has no such limit, and needs none here). */
const MAX_DEPTH = 1024;

const OBJECT = 1;
const ARRAY = 2;

const enum State {
  Value,
  Key,
  AfterValue,
}

const enum Pending {
  None,
  ToolCallId,
  Content,
}

/** Open containers of the line being checked (reused: one line is checked at a time). */
let containers = new Uint8Array(64);

/**
 * The head of the message line starting at `bytes[start]` and ending at the first "\n" before
 * `limit`, or null when the line is not proved (see the module comment), including when no "\n"
 * follows it before `limit`. A parent id equal to `previousId` (the line before, as a chain of
 * entries has it) is that same string.
 */
export function readMessageLine(bytes: Uint8Array, view: DataView, start: number, limit: number, shape: MessageLineShape, previousId: string | null = null): MessageLineHead | null {
  const idStart = matchBytes(bytes, start, limit, shape.prefix);
  if (idStart < 0) return null;
  const idEnd = plainStringEnd(bytes, idStart, limit);
  if (idEnd <= idStart) return null; // not a plain string, or empty (the schema wants at least one character)
  let i = matchBytes(bytes, idEnd, limit, shape.parentKey);
  if (i < 0) return null;
  let parentStart = -1;
  let parentEnd = -1;
  if (bytes[i] === QUOTE) {
    parentStart = i + 1;
    parentEnd = plainStringEnd(bytes, parentStart, limit);
    if (parentEnd < 0) return null;
    i = parentEnd + 1;
  } else {
    i = matchBytes(bytes, i, limit, NULL);
    if (i < 0) return null;
  }
  const timestampStart = matchBytes(bytes, i, limit, TIMESTAMP_FIELD);
  if (timestampStart < 0) return null;
  const timestampEnd = plainStringEnd(bytes, timestampStart, limit);
  if (timestampEnd < 0) return null;
  const roleStart = matchBytes(bytes, timestampEnd, limit, MESSAGE_ROLE_FIELD);
  if (roleStart < 0) return null;
  const roleEnd = plainStringEnd(bytes, roleStart, limit);
  if (roleEnd < 0) return null;
  // The head's strings count as much as the rest's: the full reader looks at every string value.
  sawBlobRef =
    mayBeBlobRef(bytes, idStart) || (parentStart >= 0 && mayBeBlobRef(bytes, parentStart)) || mayBeBlobRef(bytes, timestampStart) || mayBeBlobRef(bytes, roleStart);
  toolCallIdStart = -1;
  toolCallIdEnd = -1;
  messageTimestampStart = -1;
  messageTimestampEnd = -1;
  content = "absent";
  const end = checkRest(bytes, view, roleEnd + 1, limit, shape.refusedKeys);
  if (end < 0) return null;
  return {
    id: ascii(bytes, idStart, idEnd),
    parentId: parentStart < 0 ? null : previousId !== null && isAscii(bytes, parentStart, parentEnd, previousId) ? previousId : ascii(bytes, parentStart, parentEnd),
    timestampStart,
    timestampEnd,
    role: knownRole(bytes, roleStart, roleEnd) ?? ascii(bytes, roleStart, roleEnd),
    blobRef: sawBlobRef,
    toolCallIdStart,
    toolCallIdEnd,
    messageTimestampStart,
    messageTimestampEnd,
    content,
    end,
  };
}

/** Roles kept once, not once per line (a session holds many thousands of entries). */
const ROLES = ["user", "assistant", "toolResult", "custom", "bashExecution", "branchSummary", "compactionSummary"].map((role) => ({ role, bytes: encoder.encode(role) }));

function knownRole(b: Uint8Array, start: number, end: number): string | undefined {
  for (const known of ROLES) if (equalBytes(b, start, end, known.bytes)) return known.role;
  return undefined;
}

/** Whether the line checked last has a string value that may be a blob ref. */
let sawBlobRef = false;
/** The message's last `toolCallId` in the line checked last (see MessageLineHead). */
let toolCallIdStart = -1;
let toolCallIdEnd = -1;
/** The message's timestamp and content in the line checked last (see MessageLineHead). */
let messageTimestampStart = -1;
let messageTimestampEnd = -1;
let content: MessageContentShape = "absent";

/**
 * Checks the line from just after the message's role value (inside the message object, inside the
 * entry) to its "\n". Returns the index of that "\n", or -1 when the line is not proved.
 */
function checkRest(b: Uint8Array, view: DataView, i: number, end: number, refusedKeys: ReadonlySet<string>): number {
  let depth = 2;
  containers[0] = OBJECT;
  containers[1] = OBJECT;
  let inMessage = true;
  let state = State.AfterValue;
  /** The value about to be read is the message's toolCallId, or its content, or neither. */
  let pending = Pending.None;
  /** The depth inside the message's content array (its items are at this depth), or -1. */
  let contentDepth = -1;
  for (;;) {
    let c = b[i];
    while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
    if (state === State.AfterValue) {
      if (c === COMMA) {
        i++;
        state = containers[depth - 1] === OBJECT ? State.Key : State.Value;
      } else if ((c === RBRACE && containers[depth - 1] === OBJECT) || (c === RBRACKET && containers[depth - 1] === ARRAY)) {
        i++;
        depth--;
        if (depth === 1) inMessage = false;
        if (depth < contentDepth) contentDepth = -1;
        if (depth === 0) break;
      } else {
        return -1;
      }
    } else if (state === State.Key) {
      if (c !== QUOTE) return -1;
      const keyStart = i + 1;
      const keyEnd = stringEnd(b, view, keyStart, end);
      if (keyEnd < 0) return -1;
      i = keyEnd + 1;
      c = b[i];
      while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
      if (c !== COLON) return -1;
      i++;
      state = State.Value;
      if (depth === 1) {
        // A top-level key after `message`: JSON.parse would let it replace a field read above.
        const key = plainKey(b, keyStart, keyEnd);
        if (key === null || refusedKeys.has(key)) return -1;
      } else if (depth === 2 && inMessage) {
        if (hasByte(b, keyStart, keyEnd, BACKSLASH)) return -1; // an escaped name might be "role"
        if (equalBytes(b, keyStart, keyEnd, ROLE)) return -1;
        if (equalBytes(b, keyStart, keyEnd, TIMESTAMP)) {
          // The message's timestamp must be a finite number (z.number()).
          c = b[i];
          while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
          const numberEnd = jsonNumberEnd(b, i);
          if (numberEnd < 0 || !Number.isFinite(Number(ascii(b, i, numberEnd)))) return -1;
          messageTimestampStart = i;
          messageTimestampEnd = numberEnd;
          i = numberEnd;
          state = State.AfterValue;
        } else if (equalBytes(b, keyStart, keyEnd, TOOL_CALL_ID)) pending = Pending.ToolCallId;
        else if (equalBytes(b, keyStart, keyEnd, CONTENT)) pending = Pending.Content;
      }
    } else {
      // State.Value
      if (pending !== Pending.None) {
        // A later toolCallId or content replaces this one, as in JSON.parse.
        if (pending === Pending.ToolCallId) {
          // One that is no string is none.
          toolCallIdStart = c === QUOTE ? i + 1 : -1;
          toolCallIdEnd = -1;
        } else {
          content = c === QUOTE ? "string" : c === LBRACKET ? "array" : "other";
          if (c === LBRACKET) contentDepth = depth + 1;
        }
        pending = Pending.None;
      }
      if (c === QUOTE) {
        const next = b[i + 1];
        if ((next === 0x62 || next === BACKSLASH) && mayBeBlobRef(b, i + 1)) sawBlobRef = true;
        const closing = stringEnd(b, view, i + 1, end);
        if (closing < 0) return -1;
        if (toolCallIdStart === i + 1) toolCallIdEnd = closing;
        i = closing + 1;
        state = State.AfterValue;
      } else if (c === LBRACE || c === LBRACKET) {
        if (depth === MAX_DEPTH) return -1;
        if (depth === containers.length) {
          const grown = new Uint8Array(containers.length * 2);
          grown.set(containers);
          containers = grown;
        }
        containers[depth++] = c === LBRACE ? OBJECT : ARRAY;
        i++;
        c = b[i];
        while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
        if (c === (containers[depth - 1] === OBJECT ? RBRACE : RBRACKET)) {
          i++;
          depth--;
          if (depth < contentDepth) contentDepth = -1;
          state = State.AfterValue;
        } else {
          state = containers[depth - 1] === OBJECT ? State.Key : State.Value;
        }
      } else if (c === MINUS || (c !== undefined && c >= 0x30 && c <= 0x39)) {
        i = jsonNumberEnd(b, i);
        if (i < 0) return -1;
        state = State.AfterValue;
      } else {
        const literal = c === 0x74 ? TRUE : c === 0x66 ? FALSE : c === 0x6e ? NULL : null;
        if (literal === null) return -1;
        if (literal === NULL && depth === contentDepth) content = "other"; // a null item: its text cannot be read
        i = matchBytes(b, i, end, literal);
        if (i < 0) return -1;
        state = State.AfterValue;
      }
    }
  }
  // Only whitespace may follow the entry, up to the end of the line.
  let c = b[i];
  while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
  return c === NEWLINE && i < end ? i : -1;
}

/**
 * The index of the closing quote of the JSON string whose content starts at `i`, or -1 when the
 * string is not valid JSON before `end` (a raw control character, a bad escape, no closing quote).
 * Plain content is skipped four bytes at a time (most of a session's bytes are string content):
 * `view` reads the same bytes as 32-bit words at any offset.
 */
function stringEnd(b: Uint8Array, view: DataView, i: number, end: number): number {
  const lastWord = end - 4;
  for (;;) {
    for (;;) {
      if (i > lastWord) {
        while (i < end && STRING_STOP[b[i]!] === 0) i++; // not past the end: an out-of-bounds read deoptimizes
        break;
      }
      const v = view.getInt32(i, true);
      const quote = v ^ 0x22222222;
      const backslash = v ^ 0x5c5c5c5c;
      // Some byte < 0x20, == 0x22 or == 0x5c (Hacker's Delight's hasless/haszero): the lowest flagged
      // byte is the first such byte (later flags may be false ones).
      const found = (((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080;
      if (found !== 0) {
        i += (31 - Math.clz32(found & -found)) >> 3;
        break;
      }
      i += 4;
    }
    if (i >= end) return -1;
    const c = b[i];
    if (c === QUOTE) return i;
    if (c !== BACKSLASH || i + 1 >= end) return -1;
    const escaped = b[i + 1]!;
    if (SIMPLE_ESCAPE[escaped] === 1) {
      i += 2;
    } else if (escaped === 0x75 && i + 5 < end && HEX[b[i + 2]!] === 1 && HEX[b[i + 3]!] === 1 && HEX[b[i + 4]!] === 1 && HEX[b[i + 5]!] === 1) {
      i += 6;
    } else {
      return -1;
    }
  }
}

/**
 * The index of the closing quote of a string of printable ASCII without escapes starting at `i`
 * (at most MAX_PLAIN long), or -1: anything else is for the full parse to decode.
 */
function plainStringEnd(b: Uint8Array, i: number, end: number): number {
  const limit = Math.min(end, i + MAX_PLAIN);
  for (; i < limit; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
  }
  return -1;
}

/** A key of printable ASCII without escapes, or null. */
function plainKey(b: Uint8Array, start: number, end: number): string | null {
  return plainStringEnd(b, start, end + 1) === end ? ascii(b, start, end) : null;
}

/** The end of the JSON number at `i`, or -1 when there is none. */
function jsonNumberEnd(b: Uint8Array, i: number): number {
  if (b[i] === MINUS) i++;
  let c = b[i];
  if (c === 0x30) {
    c = b[++i];
  } else if (c !== undefined && c >= 0x31 && c <= 0x39) {
    do c = b[++i];
    while (c !== undefined && c >= 0x30 && c <= 0x39);
  } else {
    return -1;
  }
  if (c === 0x2e) {
    c = b[++i];
    if (c === undefined || c < 0x30 || c > 0x39) return -1;
    do c = b[++i];
    while (c !== undefined && c >= 0x30 && c <= 0x39);
  }
  if (c === 0x65 || c === 0x45) {
    c = b[++i];
    if (c === 0x2b || c === MINUS) c = b[++i];
    if (c === undefined || c < 0x30 || c > 0x39) return -1;
    do c = b[++i];
    while (c !== undefined && c >= 0x30 && c <= 0x39);
  }
  return i;
}

/**
 * Whether the JSON string content starting at `i` may decode to something starting
 * with the blob ref prefix, escapes decoded as JSON.parse decodes them: only a `\u` escape can
 * stand for one of the prefix's characters (the others stand for quotes, slashes and controls), so
 * the text a tool printed ("\n…", "\"…") is no candidate.
 */
function mayBeBlobRef(b: Uint8Array, i: number): boolean {
  for (let k = 0; k < BLOB_PREFIX.length; k++) {
    const c = b[i];
    if (c === BACKSLASH) {
      // An invalid escape fails the proof anyway (stringEnd): no candidate either way.
      if (b[i + 1] !== 0x75 || !(HEX[b[i + 2]!]! & HEX[b[i + 3]!]! & HEX[b[i + 4]!]! & HEX[b[i + 5]!]!) || parseInt(ascii(b, i + 2, i + 6), 16) !== BLOB_PREFIX[k]) return false;
      i += 6;
    } else {
      if (c !== BLOB_PREFIX[k]) return false;
      i++;
    }
  }
  return true;
}

/** `i + pattern.length` when `pattern` is at `i` (before `end`), else -1. */
function matchBytes(b: Uint8Array, i: number, end: number, pattern: Uint8Array): number {
  if (i + pattern.length > end) return -1;
  for (let k = 0; k < pattern.length; k++) if (b[i + k] !== pattern[k]) return -1;
  return i + pattern.length;
}

function hasByte(b: Uint8Array, start: number, end: number, byte: number): boolean {
  for (let i = start; i < end; i++) if (b[i] === byte) return true;
  return false;
}

function equalBytes(b: Uint8Array, start: number, end: number, pattern: Uint8Array): boolean {
  return end - start === pattern.length && matchBytes(b, start, end, pattern) === end;
}

const asciiDecoder = new TextDecoder();

/** Whether `bytes[start, end)` are the characters of `text`. */
function isAscii(b: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let k = 0; k < text.length; k++) if (b[start + k] !== text.charCodeAt(k)) return false;
  return true;
}

/** Bytes known to be printable ASCII as a string. */
export function ascii(b: Uint8Array, start: number, end: number): string {
  // Entry ids are 8 characters: built directly, without a view and a decoder call.
  if (end - start === 8) return String.fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!, b[start + 4]!, b[start + 5]!, b[start + 6]!, b[start + 7]!);
  return asciiDecoder.decode(b.subarray(start, end));
}

/**
 * Runs a line through every branch of the proof (about 0.1 ms), for a process about to prove a
 * large file: V8 optimizes these functions for the branches it has seen run, and throws the
 * optimized code away when a new one runs (the first `\u` escape or `null` of a file, or a range
 * that ends inside a string, thousands of lines in). In a fresh process the lines of the bench's
 * 51 MB session of real messages take a median 92 ms of CPU to prove after this, 105 ms without
 * (10 processes each). Not run at load: browser bundles would carry the line (their size is capped).
 */
export function primeLineProof(): void {
  const text = '{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","x":["\\u0062\\n","b",true,false,null,-1.5e+3,0,[],{}, {"y":2.0E-1},"abcdefghij"],"timestamp":1}}\n';
  const line = encoder.encode(text);
  const view = new DataView(line.buffer);
  const shape = messageLineShape("parentId");
  // Whole, and cut inside its last string, as a range of the file ends inside one.
  for (let k = 0; k < 4; k++) readMessageLine(line, view, 0, k % 2 ? line.length : text.indexOf("j") + 1, shape, "p");
}
