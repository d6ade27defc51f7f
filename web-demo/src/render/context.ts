/**
 * A session context (what the model sees on one branch) as DOM: one article per message, styled
 * by role; thinking collapsed, tool calls summarized on one line, images from their base64.
 */
import type { AgentMessage, SessionContext } from "../../../src/index.js";
import { BLOB_REF_PREFIX } from "../../../src/index.js";
import { el, formatDate, preview, type Child } from "./dom.js";

type Block = Record<string, unknown>;

const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** Image types a data: URL may carry into an <img>. */
const IMAGE_MIME = /^image\/[a-z0-9.+-]+$/i;

export function renderContext(context: SessionContext): HTMLElement {
  const model = context.model ? `${context.model.provider}/${context.model.modelId}` : "none";
  const messages = context.messages.map(renderMessage);
  return el(
    "section",
    { class: "context" },
    el("p", { class: "context-meta" }, `model ${model} · thinking ${context.thinkingLevel} · ${messages.length} messages in context`),
    messages.length === 0 ? el("p", { class: "empty" }, "No messages on this branch.") : el("ol", { class: "messages" }, ...messages.map((m) => el("li", {}, m))),
  );
}

export function renderMessage(message: AgentMessage): HTMLElement {
  switch (message.role) {
    case "user":
      return article(message, "user", [], renderContent(message.content));
    case "assistant":
      return renderAssistant(message);
    case "toolResult":
      return renderToolResult(message);
    case "bashExecution":
      return renderBashExecution(message);
    case "custom":
      return article(message, `custom · ${text(message.customType)}`, message.display === false ? ["hidden from the user"] : [], renderContent(message.content));
    case "branchSummary":
      return article(message, "branch summary", [`from ${text(message.fromId)}`], el("div", { class: "text" }, text(message.summary)));
    case "compactionSummary":
      return article(
        message,
        "compaction summary",
        typeof message.tokensBefore === "number" ? [`${message.tokensBefore.toLocaleString("en-US")} tokens before`] : [],
        el("div", { class: "text" }, text(message.summary)),
      );
    default:
      // A role this viewer does not know (another fork's): shown as it is stored.
      return article(message, message.role, [], el("pre", { class: "raw" }, JSON.stringify(message, null, 2)));
  }
}

function article(message: AgentMessage, title: string, details: string[], ...body: Child[]): HTMLElement {
  const time = typeof message.timestamp === "number" ? formatDate(message.timestamp) : "";
  return el(
    "article",
    { class: `message role-${cssName(message.role)}`, "data-role": message.role },
    el("header", {}, el("span", { class: "role" }, title), ...details.map((d) => el("span", { class: "detail" }, d)), time && el("time", {}, time)),
    ...body,
  );
}

function cssName(role: string): string {
  return role.replace(/[^A-Za-z0-9_-]/g, "_");
}

function renderAssistant(message: AgentMessage): HTMLElement {
  const details: string[] = [];
  if (typeof message.provider === "string" && typeof message.model === "string") details.push(`${message.provider}/${message.model}`);
  const stopReason = text(message.stopReason);
  if (stopReason === "error" || stopReason === "aborted") details.push(stopReason);
  const errorMessage = text(message.errorMessage);
  return article(message, "assistant", details, renderContent(message.content), errorMessage && el("p", { class: "error-text" }, errorMessage));
}

function renderToolResult(message: AgentMessage): HTMLElement {
  const details = [text(message.toolName) || "tool"];
  if (message.isError === true) details.push("error");
  const body = renderContent(message.content, "tool-output");
  const element = article(message, "tool result", details, body);
  if (message.isError === true) element.classList.add("is-error");
  return element;
}

function renderBashExecution(message: AgentMessage): HTMLElement {
  const details: string[] = [];
  if (typeof message.exitCode === "number") details.push(`exit ${message.exitCode}`);
  if (message.cancelled === true) details.push("cancelled");
  if (message.truncated === true) details.push("truncated");
  return article(
    message,
    "bash",
    details,
    el("pre", { class: "command" }, `$ ${text(message.command)}`),
    text(message.output) && el("pre", { class: "tool-output" }, text(message.output)),
  );
}

/**
 * Message content: a string, or blocks (text, image, thinking, toolCall). Text of tool output goes
 * into monospace blocks (`textClass`), prose keeps its line breaks.
 */
export function renderContent(content: unknown, textClass = "text"): HTMLElement {
  const body = el("div", { class: "content" });
  const textElement = (value: string) => (textClass === "text" ? el("div", { class: "text" }, value) : el("pre", { class: textClass }, value));
  if (typeof content === "string") {
    body.append(textElement(content));
  } else if (Array.isArray(content)) {
    for (const block of content) {
      if (!isObject(block)) continue;
      switch (block.type) {
        case "text":
          body.append(textElement(text(block.text)));
          break;
        case "image":
          body.append(renderImage(block));
          break;
        case "thinking":
          body.append(renderThinking(block));
          break;
        case "toolCall":
          body.append(renderToolCall(block));
          break;
        default:
          body.append(el("pre", { class: "raw" }, JSON.stringify(block, null, 2)));
      }
    }
  }
  return body;
}

export function renderImage(block: Block): HTMLElement {
  const data = text(block.data);
  const mimeType = text(block.mimeType);
  if (data.startsWith(BLOB_REF_PREFIX)) {
    return el("p", { class: "missing-image" }, `image not in storage (${data})`);
  }
  if (!IMAGE_MIME.test(mimeType)) {
    return el("p", { class: "missing-image" }, `image of type ${JSON.stringify(mimeType)} not shown`);
  }
  return el(
    "figure",
    { class: "image" },
    el("img", { src: `data:${mimeType};base64,${data}`, alt: `image (${mimeType})` }),
    el("figcaption", {}, mimeType),
  );
}

/** Collapsed: thinking is long and secondary to the answer. */
function renderThinking(block: Block): HTMLElement {
  const redacted = block.redacted === true;
  return el(
    "details",
    { class: "thinking" },
    el("summary", {}, redacted ? "Thinking (redacted)" : "Thinking"),
    el("div", { class: "text" }, redacted ? "" : text(block.thinking)),
  );
}

/** Arguments worth showing on the summary line, in order of preference. */
const SUMMARY_ARGUMENTS = ["command", "pattern", "query", "url", "path", "file_path"];

export function toolCallSummary(name: string, args: unknown): string {
  if (isObject(args)) {
    for (const key of SUMMARY_ARGUMENTS) {
      if (typeof args[key] === "string") return `${name} ${preview(args[key], 100)}`;
    }
  }
  return `${name} ${preview(JSON.stringify(args ?? {}), 100)}`;
}

function renderToolCall(block: Block): HTMLElement {
  const name = text(block.name) || "tool";
  return el(
    "details",
    { class: "tool-call" },
    el("summary", {}, el("code", {}, toolCallSummary(name, block.arguments))),
    el("pre", { class: "tool-arguments" }, JSON.stringify(block.arguments ?? {}, null, 2)),
  );
}
