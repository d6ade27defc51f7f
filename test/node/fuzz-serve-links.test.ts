/**
 * The fuzzing of fuzz-serve.test.ts on a store with symbolic links inside its root to outside it
 * (issue 22, item 1): `sessions/link.jsonl` → `../../outside/auth.json`, `sessions/linkdir` →
 * `../../outside`, `sessions/abslink.jsonl` → a sibling's file by its absolute path,
 * `blobs/rootlink` → the root (whose auth.json is not served). Every property of the plain store
 * holds: no answer carries an outside file, nothing outside changes, whatever the request.
 */
import { describeFuzzedServe } from "./fuzz-helpers.js";

describeFuzzedServe("sessionkit serve, fuzzed, with symbolic links out of the root", { links: true });
