/**
 * The session view's header: the session's name, its figures over all branches (dates, models,
 * message counts, tool calls, tokens, cost, entries), what the app noticed about the file, the key
 * hint and the action buttons. It renders from the model and reports which button was pressed.
 */
import type { SessionModel } from "../model/session-model.js";
import { el, formatDate, formatTokens, type Child } from "../render/dom.js";

/** A button in the header. */
export interface HeaderButton {
  id: string;
  label: string;
  title: string;
}

export interface SessionHeaderOptions {
  model: SessionModel;
  /** What the app says about the file (load problems, findings). */
  notices: readonly Child[];
  buttons: readonly HeaderButton[];
  /** Offer the follow switch (the store can change while it is viewed). */
  followable: boolean;
  onButton: (id: string) => void;
  onFollowSwitch: () => void;
}

export class SessionHeader {
  readonly element = el("div", { id: "session-header", class: "session-header" });
  readonly #options: SessionHeaderOptions;

  constructor(options: SessionHeaderOptions) {
    this.#options = options;
    this.element.addEventListener("click", (event) => {
      const target = event.target as Element;
      const buttonId = target.closest<HTMLElement>("[data-action-id]")?.dataset.actionId;
      if (buttonId) options.onButton(buttonId);
      else if (target.closest("[data-action='follow']")) options.onFollowSwitch();
    });
  }

  /** Draws the header again: the figures grow while the session is followed. */
  render(following: boolean): void {
    const { model, notices, buttons, followable } = this.#options;
    const { stats, header } = model;
    const tokens = [
      stats.tokens.input && `↑${formatTokens(stats.tokens.input)}`,
      stats.tokens.output && `↓${formatTokens(stats.tokens.output)}`,
      stats.tokens.cacheRead && `R${formatTokens(stats.tokens.cacheRead)}`,
      stats.tokens.cacheWrite && `W${formatTokens(stats.tokens.cacheWrite)}`,
    ].filter(Boolean);
    const counts = [
      stats.userMessages && `${stats.userMessages} user`,
      stats.assistantMessages && `${stats.assistantMessages} assistant`,
      stats.toolResults && `${stats.toolResults} tool results`,
      stats.customMessages && `${stats.customMessages} custom`,
      stats.compactions && `${stats.compactions} compactions`,
      stats.branchSummaries && `${stats.branchSummaries} branch summaries`,
    ].filter(Boolean);
    const dates = stats.lastTimestamp && stats.lastTimestamp !== header.timestamp ? `${formatDate(header.timestamp)} → ${formatDate(stats.lastTimestamp)}` : formatDate(header.timestamp);
    const item = (name: string, label: string, value: string) => el("div", { class: "info-item", "data-field": name }, el("span", { class: "info-label" }, `${label}:`), el("span", { class: "info-value" }, value));
    const actions = buttons.map((button) => el("button", { type: "button", class: "header-btn", id: `action-${button.id}`, "data-action-id": button.id, title: button.title }, button.label));
    if (followable) {
      actions.push(el("button", { type: "button", class: following ? "header-btn on" : "header-btn", id: "action-follow", "data-action": "follow", "aria-pressed": String(following), title: "Show entries as they are written" }, following ? "● Following" : "Follow"));
    }
    this.element.replaceChildren(
      el("h1", { class: "session-title" }, model.sessionName() ?? `Session: ${header.id}`),
      el(
        "div",
        { class: "header-info" },
        item("id", "Id", header.id),
        item("date", "Date", dates),
        typeof header.cwd === "string" && item("cwd", "Dir", header.cwd),
        item("models", "Models", stats.models.join(", ") || "unknown"),
        item("messages", "Messages", counts.join(", ") || "0"),
        item("tool-calls", "Tool calls", String(stats.toolCalls)),
        item("tokens", "Tokens", tokens.join(" ") || "0"),
        item("cost", "Cost", `$${stats.cost.total.toFixed(3)}`),
        item("entries", "Entries", model.size.toLocaleString("en-US")),
      ),
      el("div", { class: "notices" }, ...notices),
      el("div", { class: "help-bar" }, el("span", { class: "help-hint" }, "T thinking · O outputs · J/K messages · [ ] turns · Esc back to leaf · ? keys"), el("div", { class: "header-actions" }, ...actions)),
    );
  }
}
