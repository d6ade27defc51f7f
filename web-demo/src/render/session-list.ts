/** The stored sessions, most recently modified first: name (or first message), modified, message count. */
import type { SessionInfo } from "../../../src/format/types.js";
import { el, formatDate, preview } from "./dom.js";

export interface SessionListOptions {
  /** The open session's path. */
  selectedPath: string | null;
  onOpen: (path: string) => void;
}

export function sessionTitle(info: SessionInfo): string {
  return info.name ?? (preview(info.firstMessage, 90) || "(no messages)");
}

export function renderSessionList(infos: readonly SessionInfo[], options: SessionListOptions): HTMLElement {
  if (infos.length === 0) return el("p", { class: "empty" }, "No sessions stored. Import a .jsonl or .zip file.");
  const list = el("ul", { class: "session-list" });
  for (const info of infos) {
    const selected = info.path === options.selectedPath;
    const button = el(
      "button",
      { type: "button", title: info.path },
      el("span", { class: "session-title" }, sessionTitle(info)),
      el(
        "span",
        { class: "session-meta" },
        el("time", { datetime: info.modified.toISOString() }, formatDate(info.modified)),
        ` · ${info.messageCount} ${info.messageCount === 1 ? "message" : "messages"} (all branches)`,
      ),
      el("span", { class: "session-cwd" }, info.cwd),
    );
    button.addEventListener("click", () => options.onOpen(info.path));
    list.append(el("li", { class: selected ? "session selected" : "session", "data-path": info.path, "aria-current": selected ? "true" : undefined }, button));
  }
  return list;
}
