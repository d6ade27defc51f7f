/**
 * The stores of `sessionkit serve`, when it served this page: `GET api/stores` answers with them
 * (a static host answers 404, or its index.html). One `httpStorage` per store; the page's
 * requests carry the cookie the server set when the printed URL (with its token) was opened.
 */
import * as z from "zod/mini";
import { httpStorage, type ServedStore } from "../../../adapters/rpc/http.js";
import { searchWithIndex } from "./index-search.js";
import { PortStoreSource } from "./source.js";

const servedStoresSchema = z.array(z.object({ id: z.string(), label: z.string(), readOnly: z.boolean(), agent: z.optional(z.string()), samples: z.optional(z.boolean()) }));

/** The stores the server of this page offers, or null when no `sessionkit serve` served it. */
export async function servedStores(page: string = location.href): Promise<ServedStore[] | null> {
  let response: Response;
  try {
    response = await fetch(new URL("api/stores", page), { credentials: "same-origin", cache: "no-store" });
  } catch {
    return null;
  }
  if (!response.ok || !(response.headers.get("content-type") ?? "").startsWith("application/json")) return null;
  const parsed = servedStoresSchema.safeParse(await response.json().catch(() => null));
  return parsed.success ? parsed.data : null;
}

/** Every served store as one read-only (unless served with --write) port; sessions can be followed; search uses the index. */
export function serveSource(stores: readonly ServedStore[], origin: string = location.origin): PortStoreSource {
  return new PortStoreSource(
    "serve",
    stores.map((store) => ({
      id: store.id,
      label: store.label,
      ...(store.agent === undefined ? {} : { agent: store.agent }),
      storage: httpStorage({ url: origin, store: store.id }),
      writable: !store.readOnly,
      samples: store.samples === true,
    })),
    true,
    searchWithIndex,
  );
}
