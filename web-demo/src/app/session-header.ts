/**
 * The session view's header, laid out for reading: one line (the session's name, a summary once
 * the details scrolled away, the live state, Follow, "Details") that stays at the top of the
 * messages; under it a strip of what the app noticed about the file (dismissable); then the
 * details (id, dates, directory, models, counts, tool calls, tokens, cost, entries, the key hint
 * and the action buttons), which sit above the first message and scroll away with the messages.
 * "Details" pins them under the line while scrolled. It renders from the model and reports which
 * button was pressed; the messages panel holds it in its scroller.
 */
import type { SessionModel } from "../model/session-model.js";
import { dateRangeText, dateText, el, formatCount, formatTokens, type Child } from "../render/dom.js";

/** A button in the header. */
export interface HeaderButton {
  id: string;
  label: string;
  title: string;
}

export interface SessionHeaderOptions {
  model: SessionModel;
  /** What the app says about the file (load problems, findings): the strip's content. */
  notices: readonly Child[];
  buttons: readonly HeaderButton[];
  /** The store can change while the session is viewed: show the live state and offer Follow. */
  followable: boolean;
  /** The model holds only the file's end (a preview while the rest is read): its figures are not the session's. */
  partial?: boolean;
  onButton: (id: string) => void;
  onFollowSwitch: () => void;
  /** ☰ on a narrow screen: the tree lies over the messages until chosen from. */
  onOpenTree: () => void;
}

/** How the view keeps up with a growing file: not at all, watching it, or following its newest leaf. */
export type LiveState = "off" | "live" | "following";

export class SessionHeader {
  /** A wrapper without a box of its own: the line and the details are laid out in the scroller. */
  readonly element = el("div", { id: "session-header", class: "session-header" });
  /** The line and the notices strip, stuck to the top of the messages. */
  readonly bar: HTMLElement;
  readonly details: HTMLElement;
  readonly #options: SessionHeaderOptions;
  readonly #title = el("h1", { class: "session-title" });
  readonly #summary = el("span", { class: "header-summary", "aria-hidden": "true" });
  readonly #live = el("span", { id: "live-state", class: "live-state", role: "status" });
  readonly #lineActions = el("div", { class: "line-actions" });
  readonly #toggle: HTMLButtonElement;
  #strip: HTMLElement | null;

  constructor(options: SessionHeaderOptions) {
    this.#options = options;
    const menu = el("button", { type: "button", id: "menu", class: "menu-button header-btn", "aria-label": "Session tree", title: "Session tree" }, "☰");
    menu.addEventListener("click", () => options.onOpenTree());
    this.#toggle = el("button", { type: "button", id: "header-toggle", class: "header-btn header-toggle", "aria-expanded": "false", "aria-controls": "header-details", title: "Show the session's details and actions" }, "Details ▾");
    this.#toggle.addEventListener("click", () => this.setPinned(!this.pinned));
    const line = el("div", { class: "header-line" }, menu, this.#title, this.#summary, this.#live, this.#lineActions, this.#toggle);
    this.#strip = options.notices.length > 0 ? this.#noticeStrip(options.notices) : null;
    this.bar = el("div", { class: "header-bar" }, line, this.#strip);
    this.details = el("div", { id: "header-details", class: "header-details" });
    this.element.append(this.bar, this.details);
    this.element.addEventListener("click", (event) => {
      const target = event.target as Element;
      const buttonId = target.closest<HTMLElement>("[data-action-id]")?.dataset.actionId;
      if (buttonId) options.onButton(buttonId);
      else if (target.closest("[data-action='follow']")) options.onFollowSwitch();
    });
  }

  get pinned(): boolean {
    return this.element.classList.contains("pinned");
  }

  /** The details shown under the line while the messages are scrolled (or put back in their place). */
  setPinned(on: boolean): void {
    this.element.classList.toggle("pinned", on);
    this.#syncTabOrder();
    this.#toggle.setAttribute("aria-expanded", String(on));
    this.#toggle.textContent = on ? "Details ▴" : "Details ▾";
  }

  /** Whether the details have scrolled out of view (the line then shows the summary); unpinned when back in place. */
  setScrolledAway(away: boolean): void {
    if (this.element.classList.contains("scrolled") === away) return;
    this.element.classList.toggle("scrolled", away);
    if (!away) this.setPinned(false);
    this.#syncTabOrder();
  }

  /** Scrolled away and not pinned, the details' buttons leave the tab order: Tab would scroll the messages back to the top ("Details" brings them). */
  #syncTabOrder(): void {
    const away = this.element.classList.contains("scrolled") && !this.pinned;
    for (const button of this.details.querySelectorAll("button")) {
      if (away) button.tabIndex = -1;
      else button.removeAttribute("tabindex");
    }
  }

  /** Draws the header again: the figures grow as the file does. */
  render(live: LiveState): void {
    const { model, buttons, followable, partial } = this.#options;
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
    const messages = stats.userMessages + stats.assistantMessages;
    const item = (name: string, label: string, value: Child) => el("div", { class: "info-item", "data-field": name }, el("span", { class: "info-label" }, `${label}:`), el("span", { class: "info-value" }, value));
    const actions = buttons.map((button) => el("button", { type: "button", class: "header-btn", id: `action-${button.id}`, "data-action-id": button.id, title: button.title }, button.label));

    this.#title.textContent = model.sessionName() ?? `Session: ${header.id}`;
    this.#summary.textContent = partial ? "Reading the session…" : `${formatCount(messages)} messages · ${tokens[0] ?? "0"} · $${stats.cost.total.toFixed(3)}`;
    this.#live.textContent = live === "live" ? "● Live" : "";
    this.#live.title = live === "live" ? "New entries of the viewed branch show as they are written" : "";
    this.#lineActions.replaceChildren(
      ...(followable
        ? [
            el(
              "button",
              {
                type: "button",
                class: live === "following" ? "header-btn on" : "header-btn",
                id: "action-follow",
                "data-action": "follow",
                "aria-pressed": String(live === "following"),
                title: "Keep to the file's newest entry, whichever branch it is on",
              },
              live === "following" ? "● Following" : "Follow",
            ),
          ]
        : []),
    );
    this.details.replaceChildren(
      el(
        "div",
        { class: "header-info" },
        item("id", "Id", header.id),
        item("date", "Date", partial ? dateText(header.timestamp) : dateRangeText(header.timestamp, stats.lastTimestamp)),
        typeof header.cwd === "string" && item("cwd", "Dir", header.cwd),
        ...(partial
          ? [item("messages", "Messages", "counted once the whole session is read")]
          : [
              item("models", "Models", stats.models.join(", ") || "unknown"),
              item("messages", "Messages", counts.join(", ") || "0"),
              item("tool-calls", "Tool calls", String(stats.toolCalls)),
              item("tokens", "Tokens", tokens.join(" ") || "0"),
              item("cost", "Cost", `$${stats.cost.total.toFixed(3)}`),
              item("entries", "Entries", formatCount(model.size)),
            ]),
      ),
      el("div", { class: "help-bar" }, el("span", { class: "help-hint" }, "T thinking · O outputs · J/K messages · [ ] turns · Esc back to leaf · ? keys"), el("div", { class: "header-actions" }, ...actions)),
    );
    this.#syncTabOrder();
  }

  /** Adds a notice that arrived after the first render (the session's secrets), opening the strip if none is shown. */
  addNotice(notice: HTMLElement): void {
    if (this.#strip?.isConnected) {
      this.#strip.querySelector(".notices")!.append(notice);
      return;
    }
    this.#strip = this.#noticeStrip([notice]);
    this.bar.append(this.#strip);
  }

  /** One line per notice, the first words of each; the whole of them when opened; × hides the strip. */
  #noticeStrip(notices: readonly Child[]): HTMLElement {
    const dismiss = el("button", { type: "button", class: "dismiss", id: "notices-dismiss", "aria-label": "Dismiss the notices", title: "Dismiss" }, "×");
    const strip = el("div", { id: "notices-strip", class: "notices-strip", role: "region", "aria-label": "Notices about the file" }, el("div", { class: "notices" }, ...notices), dismiss);
    dismiss.addEventListener("click", () => strip.remove());
    return strip;
  }
}
