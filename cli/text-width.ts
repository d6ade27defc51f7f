/**
 * How many columns text takes on a terminal, for tables. Printable ASCII takes one a character;
 * other text is measured by string-width, loaded by {@link loadTextWidth} first: it builds its
 * Unicode tables when loaded (a grapheme segmenter, regexps of emoji and marks: ~20 ms), which
 * --json output does without.
 */
import type stringWidthOf from "string-width";

let stringWidth: typeof stringWidthOf | undefined;
/** Made on first use: making one costs ~7 ms. */
let graphemes: Intl.Segmenter | undefined;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Loads string-width, which the functions below need for text that is not printable ASCII. */
export async function loadTextWidth(): Promise<void> {
  stringWidth ??= (await import("string-width")).default;
}

function widthOf(text: string): number {
  if (stringWidth === undefined) throw new Error("text-width: measuring non-ASCII text before loadTextWidth()");
  return stringWidth(text);
}

/** Terminal columns `text` takes: wide (CJK) and emoji characters take two, combining marks none. */
export function displayWidth(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : widthOf(text);
}

/** `text` cut to at most `max` columns, ending in "…" when cut (never inside a character). */
export function truncateToWidth(text: string, max: number): string {
  // Printable ASCII takes a column a character: when the first max + 1 are, the rest need no look.
  if (PRINTABLE_ASCII.test(text.slice(0, max + 1))) return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
  let width = 0;
  /** Where the text is cut when it does not fit: the last place with room for "…" after it. */
  let cut = 0;
  for (const { segment, index } of (graphemes ??= new Intl.Segmenter()).segment(text)) {
    width += widthOf(segment);
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
