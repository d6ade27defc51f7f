/**
 * The stores of `sessionkit serve`, when it served this page: `GET api/stores` answers with them
 * (a static host answers 404, or its index.html). One `httpStorage` per store. The token comes
 * from the printed URL's `?token=` once and is kept in sessionStorage: that is this origin's
 * (scheme, host and port, so no other local server reads it, as it would a cookie) and this
 * tab's, and it survives a reload.
 */
import * as z from "zod/mini";
import { httpStorage, type ServedStore } from "../../../adapters/rpc/http.js";
import { searchWithIndex } from "./index-search.js";
import { PortStoreSource } from "./source.js";

const servedStoresSchema = z.array(z.object({ id: z.string(), label: z.string(), readOnly: z.boolean(), agent: z.optional(z.string()), samples: z.optional(z.boolean()) }));

const TOKEN_KEY = "sessionkit-serve.token";

/** What `sessionkit serve` offers this page, and the token it took. */
export interface Served {
  stores: ServedStore[];
  token: string | undefined;
}

/**
 * The stores the server of this page offers; "token-needed" when it is a `sessionkit serve` that
 * refused the page's token (or its lack of one); null when no `sessionkit serve` served it.
 */
export async function servedStores(page: string = location.href): Promise<Served | "token-needed" | null> {
  const token = new URL(page).searchParams.get("token") ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  let response: Response;
  try {
    response = await fetch(new URL("api/stores", page), { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: "no-store" });
  } catch {
    return null;
  }
  if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return null;
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    return "token-needed";
  }
  const parsed = servedStoresSchema.safeParse(await response.json().catch(() => null));
  if (!response.ok || !parsed.success) return null;
  if (token !== undefined) sessionStorage.setItem(TOKEN_KEY, token);
  return { stores: parsed.data, token };
}

/** Every served store as one read-only (unless served with --write) port; sessions can be followed; search uses the index. */
export function serveSource({ stores, token }: Served, origin: string = location.origin): PortStoreSource {
  return new PortStoreSource(
    "serve",
    stores.map((store) => ({
      id: store.id,
      label: store.label,
      ...(store.agent === undefined ? {} : { agent: store.agent }),
      storage: httpStorage({ url: origin, store: store.id, token }),
      writable: !store.readOnly,
      samples: store.samples === true,
    })),
    true,
    searchWithIndex,
  );
}
