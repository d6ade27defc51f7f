/**
 * Who owns a store, and so what its files must look like. An agent reads its own store with its
 * own code: every file sessionkit writes there (a new session, an append, an import, a migration,
 * a rewrite, a fork, a move) must be what that agent writes. This table is the one place that
 * says what each owner keeps; every write path asks it.
 */
import type { SessionDialect } from "../format/dialect.js";
import type { ImageForm } from "../blobs/images.js";
import type { StoragePort } from "../port.js";
import { layoutDialect, type StoreLayout } from "./paths.js";

/**
 * - "sessionkit": a store only sessionkit reads (IndexedDB, OPFS, PostgreSQL, memory, a root of
 *   its own): large images go to `blobs/`, each file keeps its own dialect, oh-my-pi's limits.
 * - "pi", "indusagi": pi's layout and dialect, images inline (neither resolves blob refs), every
 *   entry written whole, as pi writes it.
 * - "omp" (oh-my-pi): pi's folders and dialect, large images as `blob:sha256:<hex>` refs to
 *   `blobs/<hex>`, which oh-my-pi resolves when it loads a session, and its persistence limits
 *   (REFERENCE.md: strings over 500,000 characters cut, `partialJson` and `jsonlEvents` dropped).
 * - "xcsh": oh-my-pi's layout and limits, images inline.
 * - "operator": the snake_case Python agent (seed 003): its flat layout and dialect, images inline,
 *   entries whole (its seed has no limits).
 */
export type StoreOwner = "sessionkit" | "pi" | "indusagi" | "omp" | "xcsh" | "operator";

interface OwnerFormat {
  images: ImageForm;
  /** oh-my-pi's persistence limits apply to what is written (session/persist-transform.ts). */
  limits: boolean;
  /** The agent's layout; null for sessionkit's own stores, which take any. */
  layout: StoreLayout | null;
}

const OWNER_FORMATS: Readonly<Record<StoreOwner, OwnerFormat>> = {
  sessionkit: { images: "blob-refs", limits: true, layout: null },
  pi: { images: "inline", limits: false, layout: "pi" },
  indusagi: { images: "inline", limits: false, layout: "pi" },
  omp: { images: "blob-refs", limits: true, layout: "omp" },
  xcsh: { images: "inline", limits: true, layout: "omp" },
  operator: { images: "inline", limits: false, layout: "seed003" },
};

/** The agent whose store a layout is, when nothing else says whose it is. */
const LAYOUT_OWNERS: Readonly<Record<StoreLayout, StoreOwner>> = { pi: "pi", omp: "omp", seed003: "operator" };

/** Ports whose contents no agent reads: only sessionkit's own stores live there. */
const SESSIONKIT_ONLY_PORTS: ReadonlySet<string> = new Set(["indexeddb", "opfs", "postgres", "memory"]);

/** How the owner's session files hold images. */
export function storeImageForm(owner: StoreOwner): ImageForm {
  return OWNER_FORMATS[owner].images;
}

/** Whether what is written to the owner's store is cut to oh-my-pi's persistence limits. */
export function storeLimitsContent(owner: StoreOwner): boolean {
  return OWNER_FORMATS[owner].limits;
}

/** The layout of the owner's stores; undefined for sessionkit's, which take any. */
export function ownerLayout(owner: StoreOwner): StoreLayout | undefined {
  return OWNER_FORMATS[owner].layout ?? undefined;
}

/**
 * The owner of a store nobody named: sessionkit on a port no agent reads, else the agent of the
 * store's layout (pi's, by default). Images stay inline unless the store is known to resolve refs.
 */
export function defaultStoreOwner(storage: StoragePort, layout: StoreLayout = "pi"): StoreOwner {
  return SESSIONKIT_ONLY_PORTS.has(storage.kind) ? "sessionkit" : LAYOUT_OWNERS[layout];
}

/**
 * The dialect a session written into the store gets: the agent's own; in sessionkit's stores, the
 * session's own (`fileDialect`), as sessionkit reads every dialect.
 */
export function storeDialect(owner: StoreOwner, layout: StoreLayout, fileDialect: SessionDialect): SessionDialect {
  return owner === "sessionkit" ? fileDialect : layoutDialect(OWNER_FORMATS[owner].layout ?? layout);
}
