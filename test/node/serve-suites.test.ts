/**
 * The port conformance, SessionManager and follow suites over `sessionkit serve`: a real HTTP
 * server on a free port, Node clients over real WebSockets, files in a temp dir behind it.
 */
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { describeFollowSuite } from "../shared/follow-suite.js";
import { describePortConformance } from "../../src/testing/index.js";
import { below } from "../shared/prefixed-port.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";
import { serveTempStore } from "./serve-helpers.js";

// The server exposes sessions/ and blobs/ only: the conformance suite's directories live below sessions/.
describePortConformance(
  "http (sessionkit serve --write, a Node client over a WebSocket)",
  async () => {
    const served = await serveTempStore({ write: true });
    const port = served.client({ chunkBytes: 100_000 }); // small pieces: reads and writes travel staged too
    return { port: below("sessions", port), openSecond: async () => below("sessions", served.client()), cleanup: served.cleanup };
  },
  { sync: true, locks: true, watch: true, secondPort: true },
);

describeSessionManagerSuite(
  "http (sessionkit serve --write)",
  async () => {
    const served = await serveTempStore({ write: true });
    const storage = served.client();
    return {
      storage,
      reopen: async () => {
        await storage.close();
        return served.client();
      },
      openSecond: async () => served.client(),
      cleanup: served.cleanup,
    };
  },
  { persistent: true },
);

describeFollowSuite("http: pi-like writer on the files, follower over sessionkit serve (read-only)", async () => {
  const served = await serveTempStore();
  const writer = nodeFsStorage({ root: served.root });
  return {
    writer,
    reader: served.client(),
    cleanup: async () => {
      await writer.close();
      await served.cleanup();
    },
  };
});
