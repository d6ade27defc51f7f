/**
 * Where the OPFS worker keeps its files, handed over in the worker's `name` (set when the page
 * creates it, readable at once in the worker: no start-up message to race with requests).
 */
import * as z from "zod/mini";
import { StorageError } from "../../src/port.js";
import type { OpfsLocation } from "./worker-storage.js";

const NAME_PREFIX = "sessionkit-opfs:";

const locationSchema = z.object({ root: z.optional(z.string()), bucket: z.optional(z.string()) });

export function encodeWorkerName(location: OpfsLocation): string {
  return NAME_PREFIX + JSON.stringify(location);
}

export function decodeWorkerName(name: string): OpfsLocation {
  const parsed = name.startsWith(NAME_PREFIX) ? locationSchema.safeParse(parseJson(name.slice(NAME_PREFIX.length))) : undefined;
  if (!parsed?.success) throw new StorageError("invalid", `not an OPFS storage worker name: ${JSON.stringify(name)}`);
  const { root, bucket } = parsed.data;
  return { ...(root === undefined ? {} : { root }), ...(bucket === undefined ? {} : { bucket }) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
