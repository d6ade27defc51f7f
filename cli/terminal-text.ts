/**
 * Text for a terminal. A session file's text is anyone's: printed as it is, ESC ] 0 ; … would set
 * the window title, ESC ] 52 ; … write the clipboard, ESC [ … move the cursor or clear the screen.
 * How many columns text takes: text-width.ts.
 */

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
