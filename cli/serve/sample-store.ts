/**
 * A store of sample sessions (the repository's samples/store, built by scripts/build-samples.ts)
 * says so with this file at its root. `sessionkit serve` reports such a store with
 * `samples: true`; the viewer lists its sessions after the user's own and opens the user's newest.
 */
import { stat } from "node:fs/promises";
import nodePath from "node:path";

export const SAMPLE_STORE_MARKER = "sessionkit-samples.json";

export async function isSampleStore(root: string): Promise<boolean> {
  return (await stat(nodePath.join(root, SAMPLE_STORE_MARKER)).catch(() => null))?.isFile() ?? false;
}
