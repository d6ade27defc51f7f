/**
 * One entry of the message list as DOM, as pi's export shows it: user and assistant messages
 * (markdown), thinking, tool calls with their results (bash, read, write, edit as a diff, ls,
 * find, grep, anything else as its arguments), bash executions, compactions, branch summaries,
 * custom messages, model changes. Long outputs show their first lines and "... (N more lines)".
 *
 * Every interactive part carries a `data-action` (handled by one listener on the list), and all
 * state (what is expanded) lives in `EntryView`, so an entry can be rebuilt at any time: the list
 * is virtualized and builds only what is on screen.
 */
import { BLOB_REF_PREFIX } from "../../../src/blobs/blob-store.js";
import type { SessionEntry } from "../../../src/format/types.js";
import type { SessionModel, ToolCallInfo } from "../model/session-model.js";
import { contentText } from "../model/content-text.js";
import { el, formatCount, shortenPath, timeText, type Child } from "./dom.js";
import { languageOfPath } from "./highlight.js";
import { capLines, UnboundedText } from "./bounds.js";
import { renderMarkdown } from "./markdown.js";

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;
const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** Image types an <img> may show; anything else (text/html, svg with script…) is named, not shown. */
const IMAGE_MIME = /^image\/(?:png|jpeg|gif|webp|avif|bmp)$/i;

export interface EntryView {
  model: SessionModel;
  /** Thinking text shown (pi's default) or folded to "Thinking ...". */
  thinkingVisible: boolean;
  /** Every long output expanded (the "o" toggle), unless toggled one by one since. */
  outputsExpanded: boolean;
  /** Outputs toggled one by one: key → expanded. */
  expanded: ReadonlyMap<string, boolean>;
  /** A URL for an image block: data: for inline base64, blob: for stored blobs (may resolve later). */
  imageSource(block: { data: string; mimeType: string }): string | Promise<string | null> | null;
  /** The entry scrolled to by a link (highlighted). */
  targetId: string | null;
}

/** Lines shown before "... (N more lines)": pi's numbers. */
const PREVIEW_LINES = { bash: 5, read: 10, write: 10, ls: 20, find: 20, grep: 15, other: 10 } as const;

/** The list item for an entry, or null for entries the list does not show (tool results are shown with their call). */
export function renderEntry(entry: SessionEntry, view: EntryView): HTMLElement | null {
  const body = renderBody(entry, view);
  if (!body) return null;
  const item = el("article", { class: `entry ${body.kind}`, "data-entry-id": entry.id }, ...body.children);
  if (entry.id === view.targetId) item.classList.add("target");
  return item;
}

/** Raw text shown for an entry that could not be rendered: at most this many characters. */
const RAW_TEXT_LIMIT = 20_000;

/**
 * An entry whose rendering failed (its text nests too deep to parse, or anything else threw):
 * its raw text, as text, with a note saying why. The other entries are not affected.
 */
export function renderEntryFallback(entry: SessionEntry, error: unknown, view: Pick<EntryView, "targetId">): HTMLElement {
  const reason = error instanceof UnboundedText ? error.message : `rendering failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
  const message = isObject(entry.message) ? entry.message : undefined;
  const text = message ? contentText(message.content, "\n") || JSON.stringify(message.content ?? message) : str(entry.summary) || JSON.stringify(entry);
  const shown = text.length > RAW_TEXT_LIMIT ? `${text.slice(0, RAW_TEXT_LIMIT)}\n… [${formatCount(text.length - RAW_TEXT_LIMIT)} more characters]` : text;
  return el(
    "article",
    { class: entry.id === view.targetId ? "entry render-failed target" : "entry render-failed", "data-entry-id": entry.id },
    entryTools(entry),
    el("p", { class: "render-note" }, `Shown as raw text (${reason}).`),
    el("pre", { class: "raw-text" }, capLines(shown)),
  );
}

interface Body {
  kind: string;
  children: Child[];
}

function entryTools(entry: SessionEntry): HTMLElement {
  const time = timeText(entry.timestamp);
  return el(
    "div",
    { class: "entry-tools" },
    time && el("time", { datetime: entry.timestamp }, time),
    el("button", { type: "button", class: "copy-link", "data-action": "copy-link", title: "Copy a link to this entry", "aria-label": "Copy link" }, "#"),
  );
}

function renderBody(entry: SessionEntry, view: EntryView): Body | null {
  switch (entry.type) {
    case "message":
      return renderMessage(entry, view);
    case "model_change": {
      const model = typeof entry.model === "string" ? entry.model : `${str(entry.provider)}/${str(entry.modelId)}`;
      return { kind: "model-change", children: [entryTools(entry), "Switched to model: ", el("span", { class: "model-name" }, model), entry.role ? ` (${str(entry.role)})` : null] };
    }
    case "thinking_level_change":
      return { kind: "model-change", children: [entryTools(entry), "Thinking level: ", el("span", { class: "model-name" }, str(entry.thinkingLevel))] };
    case "compaction": {
      const key = `${entry.id}:compaction`;
      const open = isExpanded(view, key);
      const tokens = typeof entry.tokensBefore === "number" ? formatCount(entry.tokensBefore) : "?";
      return {
        kind: "compaction",
        children: [
          entryTools(entry),
          el(
            "button",
            { type: "button", class: "block-toggle", "data-action": "toggle", "data-key": key, "aria-expanded": String(open) },
            el("span", { class: "compaction-label" }, "[compaction]"),
            ` Compacted from ${tokens} tokens`,
          ),
          open && el("div", { class: "markdown" }, renderMarkdown(str(entry.summary))),
        ],
      };
    }
    case "branch_summary":
      return {
        kind: "branch-summary",
        children: [entryTools(entry), el("div", { class: "block-title" }, "Branch summary"), el("div", { class: "markdown" }, renderMarkdown(str(entry.summary)))],
      };
    case "custom_message":
      if (entry.display === false) return null;
      return {
        kind: "custom-message",
        children: [entryTools(entry), el("div", { class: "block-title" }, `[${str(entry.customType)}]`), ...renderContent(entry.content, view)],
      };
    case "label":
    case "custom":
    case "session_info":
    case "leaf":
      return null;
    default:
      return { kind: "other-entry", children: [entryTools(entry), el("span", { class: "muted" }, `[${entry.type}]`)] };
  }
}

function renderMessage(entry: SessionEntry & { type: "message" }, view: EntryView): Body | null {
  const message = isObject(entry.message) ? entry.message : { role: "?" };
  const role = str(message.role);
  switch (role) {
    case "user":
      return { kind: "user-message", children: [entryTools(entry), ...renderContent(message.content, view)] };
    case "assistant":
      return { kind: "assistant-message", children: [entryTools(entry), ...renderAssistant(entry, message, view)] };
    case "toolResult": {
      // Shown inside the call that asked for it; alone only when no call on record matches.
      const callId = str(message.toolCallId);
      if (callId && view.model.hasToolCall(callId)) return null;
      const call: ToolCallInfo = { id: callId || entry.id, name: str(message.toolName) || "tool", arguments: {}, entryId: entry.id };
      return { kind: "tool-message", children: [entryTools(entry), renderToolCall(call, entry, view)] };
    }
    case "bashExecution": {
      const exitCode = message.exitCode;
      const failed = message.cancelled === true || (typeof exitCode === "number" && exitCode !== 0);
      return {
        kind: `tool-message bash-execution ${failed ? "error" : "success"}`,
        children: [
          entryTools(entry),
          el("div", { class: "tool-command" }, capLines(`$ ${str(message.command)}`)),
          str(message.output) && expandableOutput(str(message.output), PREVIEW_LINES.other, view, `${entry.id}:out`),
          message.cancelled === true
            ? el("div", { class: "warning-text" }, "(cancelled)")
            : typeof exitCode === "number" && exitCode !== 0 && el("div", { class: "error-text" }, `(exit ${exitCode})`),
        ],
      };
    }
    default:
      return {
        kind: "other-message",
        children: [entryTools(entry), el("div", { class: "block-title" }, `[${role || "message"}]`), ...renderContent(message.content, view)],
      };
  }
}

function renderAssistant(entry: SessionEntry, message: Block, view: EntryView): Child[] {
  const out: Child[] = [];
  const content = Array.isArray(message.content) ? message.content : typeof message.content === "string" ? [{ type: "text", text: message.content }] : [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === "text" && str(block.text).trim()) out.push(el("div", { class: "markdown assistant-text" }, renderMarkdown(str(block.text))));
    else if (block.type === "thinking") {
      const redacted = block.redacted === true;
      const thinking = str(block.thinking);
      if (!redacted && !thinking.trim()) continue;
      out.push(
        view.thinkingVisible
          ? el("div", { class: "thinking" }, redacted ? el("span", { class: "muted" }, "Thinking (redacted)") : capLines(thinking))
          : el("div", { class: "thinking thinking-collapsed" }, "Thinking ..."),
      );
    }
  }
  for (const block of content) {
    if (isObject(block) && block.type === "toolCall") {
      const id = str(block.id);
      const call = view.model.toolCall(id) ?? { id: id || `${entry.id}:call`, name: str(block.name) || "tool", arguments: isObject(block.arguments) ? block.arguments : {}, entryId: entry.id };
      out.push(renderToolCall(call, id ? view.model.toolResult(id) : undefined, view));
    }
  }
  if (message.stopReason === "aborted") out.push(el("div", { class: "error-text" }, "Aborted"));
  else if (message.stopReason === "error") out.push(el("div", { class: "error-text" }, `Error: ${str(message.errorMessage) || "Unknown error"}`));
  return out;
}

/** User and custom content: images first (pi's order), then the text as markdown. */
function renderContent(content: unknown, view: EntryView): Child[] {
  if (typeof content === "string") return content.trim() ? [el("div", { class: "markdown" }, renderMarkdown(content))] : [];
  if (!Array.isArray(content)) return [];
  const images = content.filter((b): b is Block => isObject(b) && b.type === "image");
  const text = contentText(content, "\n");
  return [images.length > 0 && el("div", { class: "message-images" }, ...images.map((b) => renderImage(b, view))), text.trim() && el("div", { class: "markdown" }, renderMarkdown(text))];
}

/** An image: shown when its MIME type is a raster image type (at its natural size, up to the column's width), zoomed by its button; otherwise named. */
function renderImage(block: Block, view: EntryView): HTMLElement {
  const data = str(block.data);
  const mimeType = str(block.mimeType);
  if (!IMAGE_MIME.test(mimeType)) return el("span", { class: "missing-image" }, `[image of type ${JSON.stringify(mimeType.slice(0, 60))} not shown]`);
  const missingImage = () => el("span", { class: "missing-image" }, data.startsWith(BLOB_REF_PREFIX) ? `[image not in storage: ${data.slice(0, 80)}]` : "[image]");
  const source = view.imageSource({ data, mimeType });
  if (source === null) return missingImage();
  const img = el("img", { class: "message-image", alt: `image (${mimeType})` });
  const button = el("button", { type: "button", class: "image-zoom", "data-action": "zoom-image", title: "Enlarge", "aria-label": `Enlarge the image (${mimeType})` }, img);
  const missing = () => button.replaceWith(missingImage());
  if (typeof source === "string") img.src = source;
  else void source.then((url) => (url === null ? missing() : (img.src = url)));
  return button;
}

function isExpanded(view: EntryView, key: string): boolean {
  return view.expanded.get(key) ?? view.outputsExpanded;
}

/** Text output: its first `lines` lines and "... (N more lines)" until expanded (click), highlighted when `lang` is given. */
function expandableOutput(text: string, lines: number, view: EntryView, key: string, lang?: string): HTMLElement {
  const all = text.replace(/\t/g, "   ").split("\n");
  const more = all.length - lines;
  const open = more <= 0 || isExpanded(view, key);
  const shown = open ? all.join("\n") : all.slice(0, lines).join("\n");
  const code = el("code", { "data-lang": lang });
  code.textContent = capLines(shown);
  const output = el("div", { class: "tool-output" }, el("pre", {}, code));
  if (more > 0) {
    output.classList.add("expandable");
    output.append(
      el(
        "button",
        { type: "button", class: "expand-hint", "data-action": "toggle", "data-key": key, "aria-expanded": String(open) },
        open ? "▲ collapse" : `... (${more} more ${more === 1 ? "line" : "lines"})`,
      ),
    );
  }
  return output;
}

function resultText(result: SessionEntry | undefined): string {
  if (!result || result.type !== "message" || !isObject(result.message)) return "";
  const content = result.message.content;
  if (typeof content === "string") return content;
  return contentText(content, "\n");
}

function resultImages(result: SessionEntry | undefined, view: EntryView): Child {
  if (!result || result.type !== "message" || !isObject(result.message) || !Array.isArray(result.message.content)) return null;
  const images = result.message.content.filter((b): b is Block => isObject(b) && b.type === "image");
  return images.length > 0 && el("div", { class: "tool-images" }, ...images.map((b) => renderImage(b, view)));
}

/** "path:start-end" for read's offset/limit. */
function lineRange(args: Block): string {
  const offset = typeof args.offset === "number" ? args.offset : undefined;
  const limit = typeof args.limit === "number" ? args.limit : undefined;
  if (offset === undefined && limit === undefined) return "";
  const start = offset ?? 1;
  return `:${start}${limit !== undefined ? `-${start + limit - 1}` : ""}`;
}

function header(name: string, ...rest: Child[]): HTMLElement {
  return el("div", { class: "tool-header" }, el("span", { class: "tool-name" }, name), " ", ...rest);
}

/** A tool call with its result, rendered by tool as pi's export does. */
function renderToolCall(call: ToolCallInfo, result: SessionEntry | undefined, view: EntryView): HTMLElement {
  const resultMessage = result?.type === "message" && isObject(result.message) ? result.message : undefined;
  const isError = resultMessage?.isError === true;
  const status = !result ? "pending" : isError ? "error" : "success";
  const args = call.arguments;
  const key = `${call.id}:out`;
  const path = str(args.file_path ?? args.path);
  const children: Child[] = [];
  const output = resultText(result);
  switch (call.name) {
    case "bash": {
      children.push(el("div", { class: "tool-command" }, capLines(`$ ${str(args.command) || "..."}`)));
      if (output.trim()) children.push(expandableOutput(output.trim(), PREVIEW_LINES.bash, view, key));
      break;
    }
    case "read": {
      children.push(header("read", el("span", { class: "tool-path" }, shortenPath(path), el("span", { class: "line-numbers" }, lineRange(args)))));
      children.push(resultImages(result, view));
      if (output) children.push(expandableOutput(output, PREVIEW_LINES.read, view, key, languageOfPath(path)));
      break;
    }
    case "write": {
      const content = str(args.content);
      const lineCount = content ? content.split("\n").length : 0;
      children.push(header("write", el("span", { class: "tool-path" }, shortenPath(path)), lineCount > 10 && el("span", { class: "line-count" }, ` (${lineCount} lines)`)));
      if (content) children.push(expandableOutput(content, PREVIEW_LINES.write, view, `${call.id}:content`, languageOfPath(path)));
      if (output.trim()) children.push(el("div", { class: "tool-result-text" }, capLines(output.trim())));
      break;
    }
    case "edit": {
      children.push(header("edit", el("span", { class: "tool-path" }, shortenPath(path))));
      const details = resultMessage && isObject(resultMessage.details) ? resultMessage.details : undefined;
      const diff = typeof details?.diff === "string" ? details.diff : editDiff(args);
      if (diff) children.push(renderDiff(diff, view, `${call.id}:diff`));
      if (output.trim() && (isError || !diff)) children.push(el("div", { class: "tool-result-text" }, capLines(output.trim())));
      break;
    }
    case "ls":
      children.push(header("ls", el("span", { class: "tool-path" }, shortenPath(path || "."))));
      if (output.trim()) children.push(expandableOutput(output.trim(), PREVIEW_LINES.ls, view, key));
      break;
    case "find":
      children.push(header("find", el("span", { class: "tool-pattern" }, str(args.pattern)), " in ", el("span", { class: "tool-path" }, shortenPath(path || "."))));
      if (output.trim()) children.push(expandableOutput(output.trim(), PREVIEW_LINES.find, view, key));
      break;
    case "grep":
      children.push(
        header("grep", el("span", { class: "tool-pattern" }, `/${str(args.pattern)}/`), " in ", el("span", { class: "tool-path" }, shortenPath(path || ".")), args.glob ? ` (${str(args.glob)})` : null),
      );
      if (output.trim()) children.push(expandableOutput(output.trim(), PREVIEW_LINES.grep, view, key));
      break;
    default: {
      children.push(header(call.name));
      if (Object.keys(args).length > 0) children.push(expandableOutput(JSON.stringify(args, null, 2), PREVIEW_LINES.other, view, `${call.id}:args`, "json"));
      children.push(resultImages(result, view));
      if (output) children.push(expandableOutput(output, PREVIEW_LINES.other, view, key));
    }
  }
  if (isError && call.name !== "edit" && call.name !== "write") children.push(el("div", { class: "error-text" }, "(error)"));
  return el("div", { class: `tool-execution ${status}`, "data-tool": call.name }, ...children);
}

/** oldText → newText of an edit call as removed and added lines, when the result carries no diff. */
function editDiff(args: Block): string {
  const edits = Array.isArray(args.edits) ? args.edits.filter(isObject) : [args];
  const parts: string[] = [];
  for (const edit of edits) {
    const oldText = str(edit.oldText ?? edit.old_string);
    const newText = str(edit.newText ?? edit.new_string);
    if (!oldText && !newText) continue;
    if (oldText) parts.push(...oldText.split("\n").map((l) => `-${l}`));
    if (newText) parts.push(...newText.split("\n").map((l) => `+${l}`));
  }
  return parts.join("\n");
}

/** A unified diff: added, removed and context lines, long diffs folded like outputs. */
function renderDiff(diff: string, view: EntryView, key: string): HTMLElement {
  const lines = capLines(diff.replace(/\t/g, "   ")).split("\n");
  const limit = 40;
  const open = lines.length <= limit || isExpanded(view, key);
  const shown = open ? lines : lines.slice(0, limit);
  const box = el("div", { class: "tool-diff" });
  // One element per kind run: a long diff stays a handful of nodes.
  let runClass = "";
  let runLines: string[] = [];
  const flush = () => {
    if (runLines.length > 0) box.append(el("div", { class: runClass }, runLines.join("\n")));
  };
  for (const line of shown) {
    const cls = line.startsWith("+") ? "diff-added" : line.startsWith("-") ? "diff-removed" : "diff-context";
    if (runClass !== cls) {
      flush();
      runClass = cls;
      runLines = [];
    }
    runLines.push(line);
  }
  flush();
  if (lines.length > limit) {
    box.append(
      el("button", { type: "button", class: "expand-hint", "data-action": "toggle", "data-key": key, "aria-expanded": String(open) }, open ? "▲ collapse" : `... (${lines.length - limit} more lines)`),
    );
  }
  return box;
}
