/**
 * A small element builder. Session files are untrusted (anyone can send an archive), so text only
 * ever reaches the page as text nodes, in elements the viewer makes (render/markdown.ts builds
 * markdown's elements from marked's tokens the same way).
 */
export type Child = Node | string | number | null | undefined | false;

export interface Attributes {
  class?: string;
  /** Any other attribute; undefined leaves it out. */
  [name: string]: string | undefined;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
}

/** How long to wait for a frame that a hidden page does not paint. */
const FRAME_WAIT_MS = 200;

/**
 * Resolves once the browser has painted the frame after this call (animation callbacks run before
 * a frame, a timeout queued from one after it). A hidden page paints no frames: then after
 * FRAME_WAIT_MS.
 */
export function afterNextPaint(): Promise<void> {
  return new Promise((resolve) => {
    const fallback = setTimeout(resolve, FRAME_WAIT_MS);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(fallback);
        resolve();
      }, 0),
    );
  });
}

/** `text` with each `[start, end)` of `ranges` (in order, not overlapping; others are skipped) in a <mark>. */
export function markedText(text: string, ranges: readonly (readonly [number, number])[]): Child[] {
  const parts: Child[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (!(start >= at && end > start && end <= text.length)) continue;
    if (start > at) parts.push(text.slice(at, start));
    parts.push(el("mark", {}, text.slice(start, end)));
    at = end;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** The first line of `text`, cut to `max` characters with an ellipsis. */
export function preview(text: string, max = 80): string {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Whitespace (newlines, tabs) folded to single spaces, cut to `max` characters with "...", as pi's tree shows text. */
export function oneLine(text: string, max = 100): string {
  const flat = text.replace(/[\n\t]/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

function formatDate(value: Date | number | string): string {
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** toLocaleTimeString with options builds a formatter per call (a tenth of a message's render): one, made once. */
let timeFormat: Intl.DateTimeFormat | null = null;

/** A time of day (hh:mm:ss in the reader's locale, as pi's export shows it); "" for no valid time. */
export function formatTime(value: number | string | undefined): string {
  if (value === undefined) return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  timeFormat ??= new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return timeFormat.format(date);
}

/**
 * Dates are written after the first paint: a page's first Intl date format loads ICU's calendar
 * data (14–150 ms in a fresh Chromium page on the bench machine), which the first entry would
 * otherwise wait for. Once that frame is painted, dates are written as they are made.
 */
let datesNow = false;
let pendingDates: { node: Text; format: () => string }[] | null = null;

function dateNode(format: () => string): Text {
  if (datesNow) return document.createTextNode(format());
  const node = document.createTextNode("");
  if (pendingDates === null) {
    pendingDates = [];
    void afterNextPaint().then(() => {
      datesNow = true;
      const pending = pendingDates ?? [];
      pendingDates = null;
      for (const { node, format } of pending) node.data = format();
    });
  }
  pendingDates.push({ node, format });
  return node;
}

/** A date and time in the reader's locale (toLocaleString), as text written after the first paint; "" for none. */
export function dateText(value: Date | number | string | undefined): Text {
  return dateNode(() => formatOptionalDate(value));
}

const formatOptionalDate = (value: Date | number | string | undefined) => (value === undefined ? "" : formatDate(value));

/** The dates `from → to` (`from` alone when `to` is missing or the same), as dateText writes them. */
export function dateRangeText(from: string | undefined, to: string | undefined): Text {
  return dateNode(() => (to && to !== from ? `${formatOptionalDate(from)} → ${formatOptionalDate(to)}` : formatOptionalDate(from)));
}

/** formatTime's text, written after the first paint; null for no valid time. */
export function timeText(value: number | string | undefined): Text | null {
  if (value === undefined || Number.isNaN(new Date(value).getTime())) return null;
  return dateNode(() => formatTime(value));
}

/**
 * A number as toLocaleString("en-US") writes it (12,345), integers without Intl: a page's first
 * Intl call loads ICU's data (9–29 ms in a fresh Chromium page on the bench machine), which the
 * first screen would wait for.
 */
export function formatCount(value: number): string {
  return Number.isSafeInteger(value) ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : value.toLocaleString("en-US");
}

const UNITS = ["B", "KB", "MB", "GB", "TB"];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** pi's token figures: 950, 1.2k, 45k, 1.3M. */
export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** `~/x` for paths under a home directory, as pi shortens them. */
export function shortenPath(path: string): string {
  const match = /^\/(?:Users|home)\/[^/]+/.exec(path);
  return match ? `~${path.slice(match[0].length)}` : path;
}

/**
 * The mark of a branch point (a stem and a branch leaving it), drawn by CSS (.fork-icon): the
 * character for it (⑂) is missing from common fonts, and the page loads no font of its own.
 */
export function forkIcon(): HTMLElement {
  return el("span", { class: "fork-icon", "aria-hidden": "true" });
}
