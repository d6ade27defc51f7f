/**
 * Limits on what session text may cost the page, checked before parsing or layout: a hostile
 * (or merely odd) text must not freeze or break the view. marked recurses once per level of
 * nesting (5,000 `>` overflow the stack; 2,000 lines indented one level more each take 100 s)
 * and its emphasis matching grows with the square of the delimiters in a block (2,000 nested
 * `*a` throw after 2 s); one line is laid out as one block, however long.
 */
import { formatCount } from "./dom.js";

/** Lines are cut here (with a note of what was left out): 5,000 characters are about 40 lines at the column's width. */
export const MAX_LINE = 5_000;
/** Quotes and lists nested deeper than this are not parsed as markdown. */
const MAX_NESTING = 16;
/** More `*` and `_` than this in one block (between blank lines) are not parsed as markdown. */
const MAX_EMPHASIS_DELIMITERS = 256;

/** Thrown when a text is not to be parsed: the entry is shown as raw text with `message` as the reason. */
export class UnboundedText extends Error {}

/** `text` with every line longer than MAX_LINE cut, saying how much was left out. */
export function capLines(text: string, max = MAX_LINE): string {
  if (text.length <= max) return text;
  const parts: string[] = [];
  let start = 0;
  let cut = false;
  while (start <= text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline < 0 ? text.length : newline;
    if (end - start > max) {
      parts.push(`${text.slice(start, start + max)} … [${formatCount(end - start - max)} more characters on this line]`);
      cut = true;
    } else parts.push(text.slice(start, end));
    if (newline < 0) break;
    start = newline + 1;
  }
  return cut ? parts.join("\n") : text;
}

/** Leading container markers of a line: quotes and list items (a marker, then a space or the end). */
const CONTAINERS = /^(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)))*/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Throws UnboundedText when `text` nests deeper than MAX_NESTING or has too many emphasis delimiters in a block. */
export function checkMarkdownBounds(text: string): void {
  let fence: string | null = null;
  let delimiters = 0;
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf("\n", start);
    const line = text.slice(start, newline < 0 ? text.length : newline);
    const opened = FENCE.exec(line)?.[1];
    if (fence !== null) {
      // Inside a fenced block nothing nests: the line is text until the fence closes.
      if (opened && opened[0] === fence[0] && opened.length >= fence.length) fence = null;
    } else if (opened) fence = opened;
    else if (line.trim() === "") delimiters = 0;
    else {
      const prefix = CONTAINERS.exec(line)![0];
      let depth = 0;
      let indent = 0;
      let listItem = false;
      for (const c of prefix) {
        if (c === " ") indent += 1;
        else if (c === "\t") indent += 4;
        else if (c < "0" || c > "9") {
          // A marker (an ordered item's number counts once, by its "." or ")").
          depth++;
          if (c !== ">") listItem = true;
        }
      }
      // A list nests one level per two or more columns of indentation as well (an indented line of text is code: it does not nest).
      if (depth > 0 && depth + Math.floor(indent / 2) > MAX_NESTING) throw new UnboundedText(`nested more than ${MAX_NESTING} levels deep`);
      // A list item's text is matched for emphasis on its own; a paragraph's lines together.
      if (listItem) delimiters = 0;
      for (let i = prefix.length; i < line.length; i++) {
        const c = line.charCodeAt(i);
        if (c === 42 /* * */ || c === 95 /* _ */) delimiters++;
      }
      if (delimiters > MAX_EMPHASIS_DELIMITERS) throw new UnboundedText(`more than ${MAX_EMPHASIS_DELIMITERS} emphasis marks in one paragraph`);
    }
    if (newline < 0) break;
    start = newline + 1;
  }
}
