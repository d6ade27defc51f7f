/**
 * `sessionkit/testing`: the conformance suite every sessionkit adapter passes, for a third-party
 * StoragePort to run in its own tests. It registers vitest tests, so vitest (an optional peer
 * dependency) must be installed; it uses only universal APIs and runs in Node and in vitest's
 * browser mode alike.
 *
 * ```ts
 * // my-storage.test.ts, run by `npx vitest run`
 * import { describePortConformance } from "sessionkit/testing";
 * import { myStorage } from "./my-storage.js";
 *
 * describePortConformance(
 *   "my storage",
 *   async () => {
 *     const port = await myStorage({ database: "test" });
 *     // cleanup runs after each test; openSecond (optional) opens another port on the same data.
 *     return { port, cleanup: () => port.close() };
 *   },
 *   // the optional StoragePort methods it has: their cases run only when declared
 *   { sync: true, locks: false, watch: true },
 * );
 * ```
 *
 * Each case works below its own fresh directory, so `makePort` may return one shared port.
 *
 * @module sessionkit/testing
 */
export { describePortConformance, expectStorageError, checksum, pseudoRandomBytes, type PortUnderTest, type PortCapabilities } from "./port-conformance.js";
export { waitFor } from "./wait.js";
