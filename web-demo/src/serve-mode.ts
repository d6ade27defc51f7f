/**
 * The viewer on a page `sessionkit serve` served: every store it offers (the user's agent stores,
 * and any --root), read through the server; the session list across them, search across them
 * with each store's index, following sessions as agents write them, exports.
 */
import { ViewerApp } from "./app/app.js";
import type { SessionPrefetch, StoresAnswer } from "./data/serve-boot.js";
import { serveSource, servedStores } from "./data/serve-source.js";
import { el } from "./render/dom.js";
import { secretsNotice, sessionActions } from "./session-actions.js";
import { openInsights } from "./insights/open.js";

/**
 * The viewer over the stores a `sessionkit serve` answer to `GET api/stores` names (sent with
 * `token`), or, when the server wants the token, a page that says where to find it; false when
 * the answer is none of these (the page is not served). `prefetch`: the first bytes of the
 * session the address names, asked for while this code loaded.
 */
export function startServeMode(answer: StoresAnswer, token: string | undefined, prefetch: SessionPrefetch | null): boolean {
  const served = servedStores(answer, token);
  if (served === null) return false;
  if (served === "token-needed") {
    document.body.append(el("p", { id: "token-needed", class: "empty" }, "This page needs its access token: open the URL sessionkit serve printed (it ends in ?token=…)."));
    return true;
  }
  const { stores } = served;
  const writable = stores.some((store) => !store.readOnly);
  const app: ViewerApp = new ViewerApp({
    source: serveSource(served, location.origin, prefetch),
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
  return true;
}
