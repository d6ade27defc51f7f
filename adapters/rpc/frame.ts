/**
 * The storage rpc's messages as one binary frame each (WebSocket messages, HTTP bodies): bytes
 * travel as they are, never as base64.
 *
 *   [u32 big-endian: length of the JSON part][JSON (UTF-8)][the byte arrays, back to back]
 *
 * In the JSON, every Uint8Array of the message stands as {"$bytes":[offset,length]} into the part
 * after it. Decoding checks every bound and copies each array out (so none keeps the frame alive).
 */
import { StorageError } from "../../src/port.js";

const HEADER_BYTES = 4;
const BYTES_KEY = "$bytes";

/** The media type of an HTTP body that holds one frame. */
export const FRAME_CONTENT_TYPE = "application/vnd.sessionkit.rpc-frame";

/**
 * One rpc message as a binary frame (for a WebSocket message or an HTTP body): its JSON, with each
 * Uint8Array in it moved, as raw bytes, after the JSON. {@link decodeFrame} turns it back.
 */
export function encodeFrame(message: unknown): Uint8Array {
  const parts: Uint8Array[] = [];
  let offset = 0;
  const json = JSON.stringify(message, (_key, value: unknown) => {
    if (!(value instanceof Uint8Array)) return value;
    parts.push(value);
    const placeholder = { [BYTES_KEY]: [offset, value.length] };
    offset += value.length;
    return placeholder;
  });
  const text = new TextEncoder().encode(json);
  const frame = new Uint8Array(HEADER_BYTES + text.length + offset);
  new DataView(frame.buffer).setUint32(0, text.length);
  frame.set(text, HEADER_BYTES);
  let at = HEADER_BYTES + text.length;
  for (const part of parts) {
    frame.set(part, at);
    at += part.length;
  }
  return frame;
}

/** The message a frame holds; StorageError "invalid" for anything that is not a well-formed frame of an object. */
export function decodeFrame(frame: Uint8Array): object {
  if (frame.length < HEADER_BYTES) throw invalid(`${frame.length} bytes, shorter than its header`);
  const jsonLength = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint32(0);
  if (HEADER_BYTES + jsonLength > frame.length) throw invalid(`its JSON part (${jsonLength} bytes) runs past its end (${frame.length} bytes)`);
  const binary = frame.subarray(HEADER_BYTES + jsonLength);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(frame.subarray(HEADER_BYTES, HEADER_BYTES + jsonLength));
  } catch {
    throw invalid("its JSON part is not UTF-8");
  }
  let message: unknown;
  try {
    message = JSON.parse(text, (_key, value: unknown) => {
      if (typeof value !== "object" || value === null || !(BYTES_KEY in value)) return value;
      const range = (value as Record<string, unknown>)[BYTES_KEY];
      const [offset, length] = Array.isArray(range) ? range : [];
      if (Object.keys(value).length !== 1 || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > binary.length) {
        throw invalid(`a byte array ${JSON.stringify(range)} outside its ${binary.length} bytes`);
      }
      return binary.slice(offset, offset + length);
    });
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw invalid(`its JSON part does not parse (${(error as Error).message})`);
  }
  // Every rpc message is an object: a bare null, number, string or array is no message.
  if (typeof message !== "object" || message === null || Array.isArray(message)) throw invalid(`its JSON part is ${Array.isArray(message) ? "an array" : message === null ? "null" : `a ${typeof message}`}, not an object`);
  return message;
}

function invalid(detail: string): StorageError {
  return new StorageError("invalid", `malformed rpc frame: ${detail}`);
}
