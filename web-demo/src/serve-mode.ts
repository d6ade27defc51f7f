/**
 * The viewer on a page `sessionkit serve` served: every store it offers (the user's agent stores,
 * and any --root), read through the server; the session list across them, search across them
 * with each store's index, following sessions as agents write them, exports.
 */
import { ViewerApp } from "./app/app.js";
import { serveSource, type Served } from "./data/serve-source.js";
import { el } from "./render/dom.js";
import { secretsNotice, sessionActions } from "./session-actions.js";
import { openInsights } from "./insights/open.js";

/** The viewer over the stores `served` names, or, when the server wants the token, a page that says where to find it. */
export function startServeMode(served: Served | "token-needed"): void {
  // The tab keeps the token (sessionStorage): keep it out of links, history and screenshots.
  const address = new URL(location.href);
  if (address.searchParams.has("token")) {
    address.searchParams.delete("token");
    history.replaceState(null, "", address);
  }
  if (served === "token-needed") {
    document.body.append(el("p", { id: "token-needed", class: "empty" }, "This page needs its access token: open the URL sessionkit serve printed (it ends in ?token=…)."));
    return;
  }
  const { stores } = served;
  const writable = stores.some((store) => !store.readOnly);
  const app: ViewerApp = new ViewerApp({
    source: serveSource(served),
    showList: true,
    title: "sessionkit viewer",
    emptyText: "No sessions in the stores this server offers.",
    insights: openInsights,
    sessionActions: (store, path) => sessionActions(app, store, path, async () => {}),
    sessionNotice: secretsNotice,
    barControls: [
      el(
        "span",
        { id: "served-by", class: "muted", title: stores.map((store) => store.label).join("\n") },
        `sessionkit serve · ${stores.length} ${stores.length === 1 ? "store" : "stores"}${writable ? "" : " · read-only"}`,
      ),
    ],
  });
  document.body.append(app.root);
  void app.run(() => app.start());
}
