/**
 * Opens the insights view: the session first when the address names one that is not open, then
 * the view, whose module and charting library are loaded here, on first use (a dynamic import:
 * a page that never opens insights never loads them). Given to the app by the modes that offer
 * insights (static-mode.ts, serve-mode.ts).
 */
import { insightsHash, type OpenInsights } from "./link.js";

export const openInsights: OpenInsights = async (link, host) => {
  const view = import("./insights-view.js");
  if (link.scope === "session") {
    if (!link.store || !link.path) return false;
    const current = host.current();
    if (current?.storeId !== link.store || current.path !== link.path) await host.openSession(link.store, link.path, link.leafId);
    // Opening a session writes its own address: the insights' goes back.
    history.replaceState(null, "", insightsHash(link));
  }
  await (await view).showInsights(link, host);
  return true;
};
