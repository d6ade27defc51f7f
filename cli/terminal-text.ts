/**
 * Text for a terminal. A session file's text is anyone's: printed as it is, ESC ] 0 ; … would set
 * the window title, ESC ] 52 ; … write the clipboard, ESC [ … move the cursor or clear the screen.
 */
import stringWidth from "string-width";

/** C0 controls but newline and tab, DEL, and C1 controls (U+009B is ESC [ in one character). */
const TERMINAL_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** What JSON.stringify leaves raw of those: it escapes C0 itself. */
const RAW_IN_JSON = /[\x7f-\x9f]/g;

const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(2, "0");

/** `text` with every control character a terminal acts on written as a visible `\xNN`. */
export function neutralizeControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (char) => `\\x${hex(char)}`);
}

/**
 * JSON text with DEL and C1 controls written as `\u00NN` escapes: the same JSON value, safe on a
 * terminal. (Outside strings JSON text is ASCII, so every such character is inside a string.)
 */
export function neutralizeJsonControls(json: string): string {
  return json.replace(RAW_IN_JSON, (char) => `\\u00${hex(char)}`);
}

const graphemes = new Intl.Segmenter();
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Terminal columns `text` takes: wide (CJK) and emoji characters take two, combining marks none. */
export function displayWidth(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : stringWidth(text);
}

/** `text` cut to at most `max` columns, ending in "…" when cut (never inside a character). */
export function truncateToWidth(text: string, max: number): string {
  // Printable ASCII takes a column a character: when the first max + 1 are, the rest need no look.
  if (PRINTABLE_ASCII.test(text.slice(0, max + 1))) return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
  let width = 0;
  /** Where the text is cut when it does not fit: the last place with room for "…" after it. */
  let cut = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    width += stringWidth(segment);
    if (width > max) return `${text.slice(0, cut)}…`;
    if (width <= max - 1) cut = index + segment.length;
  }
  return text;
}

/** `text` padded with spaces to `width` columns, after it ("end") or before it ("start"). */
export function padToWidth(text: string, width: number, side: "start" | "end" = "end"): string {
  const padding = " ".repeat(Math.max(0, width - displayWidth(text)));
  return side === "end" ? text + padding : padding + text;
}
