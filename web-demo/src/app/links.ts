/**
 * What the address holds, after "#": the open session (store and path), the leaf, the entry
 * scrolled to, the filter and the search, so a link opens the same view after a reload or on
 * another machine (pi's ?leafId=&targetId=, in the fragment: it works from file:// and never
 * reaches a server).
 */
import { isEntryFilter, type EntryFilter } from "../model/filters.js";

export interface LinkState {
  store: string | null;
  path: string | null;
  leafId: string | null;
  targetId: string | null;
  filter: EntryFilter;
  query: string;
}

export function readLink(hash: string = location.hash): LinkState {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const filter = params.get("filter");
  return {
    store: params.get("store"),
    path: params.get("session"),
    leafId: params.get("leaf"),
    targetId: params.get("target"),
    filter: isEntryFilter(filter) ? filter : "default",
    query: params.get("q") ?? "",
  };
}

export function linkHash(state: LinkState): string {
  const params = new URLSearchParams();
  if (state.store) params.set("store", state.store);
  if (state.path) params.set("session", state.path);
  if (state.leafId) params.set("leaf", state.leafId);
  if (state.targetId) params.set("target", state.targetId);
  if (state.filter !== "default") params.set("filter", state.filter);
  if (state.query) params.set("q", state.query);
  return `#${params.toString()}`;
}

/**
 * The full address of a state: this page with the state's fragment, never with the served page's
 * `?token=` (the tab keeps it; the address loses it only after the first paint, serve-source.ts).
 */
export function linkUrl(state: LinkState, page: string = location.href): string {
  const address = new URL(page);
  address.searchParams.delete("token");
  address.hash = "";
  return `${address.href}${linkHash(state)}`;
}
