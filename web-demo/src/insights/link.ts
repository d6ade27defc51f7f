/**
 * How the app reaches the insights view: its address (`#insights=session&store=…&session=…&leaf=…`
 * for one session, `#insights=store` for the listed sessions), the bar's button and the session
 * header's. The view itself (insights-view.ts, with its charting library) is loaded only when
 * opened (open.ts), by the modes that offer it; an exported file does not.
 */
import type { ListedSession, StoreSource } from "../data/source.js";
import type { LoadedSession } from "../data/load-session.js";
import type { SessionAction } from "../app/session-view.js";
import { el } from "../render/dom.js";

export interface InsightsLink {
  scope: "session" | "store";
  store: string | null;
  path: string | null;
  leafId: string | null;
}

export function readInsightsLink(hash: string = location.hash): InsightsLink | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const scope = params.get("insights");
  if (scope !== "session" && scope !== "store") return null;
  return { scope, store: params.get("store"), path: params.get("session"), leafId: params.get("leaf") };
}

export function insightsHash(link: InsightsLink): string {
  const params = new URLSearchParams({ insights: link.scope });
  if (link.store) params.set("store", link.store);
  if (link.path) params.set("session", link.path);
  if (link.leafId) params.set("leaf", link.leafId);
  return `#${params.toString()}`;
}

/** What the view is shown over and with: the app's session pane, its source and list, the open session. */
export interface InsightsHost {
  pane: HTMLElement;
  source: StoreSource;
  sessions: readonly ListedSession[];
  /** The session open in the app, if any. */
  current(): { storeId: string; path: string; session: LoadedSession; leafId: string | null } | null;
  openSession(storeId: string, path: string, leafId: string | null): Promise<void>;
  /** Back to what the app showed before (the open session, or nothing). */
  close(): void;
}

export type OpenInsights = (link: InsightsLink, host: InsightsHost) => Promise<boolean>;

/** The bar's button: the listed sessions' insights. */
export function insightsButton(): HTMLButtonElement {
  const button = el("button", { type: "button", id: "insights-open", class: "header-btn", title: "Cost, tokens and tools across the listed sessions" }, "Insights");
  button.addEventListener("click", () => (location.hash = insightsHash({ scope: "store", store: null, path: null, leafId: null })));
  return button;
}

/** The session header's button: this session's insights, along the viewed branch. */
export function insightsAction(storeId: string, path: string): SessionAction {
  return {
    id: "insights",
    label: "Insights",
    title: "Tokens, cost and context per turn, and the tools of this session",
    run: (view) => void (location.hash = insightsHash({ scope: "session", store: storeId, path, leafId: view.state.leafId })),
  };
}

/** Takes the insights view off `pane` (the address left it). */
export function closeInsights(pane: HTMLElement): void {
  pane.querySelector(":scope > .insights-panel")?.remove();
}
