/** The shared SessionManager suite on the Node-side ports: memory and real files in a temp dir, in pi's dialect and in seed 003's. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";

describeSessionManagerSuite("memory", async () => ({ storage: memoryStorage() }));
describeSessionManagerSuite("memory, seed 003's dialect", async () => ({ storage: memoryStorage() }), { layout: "seed003" });

const nodeFsUnderTest = async () => {
  const root = await mkdtemp(join(tmpdir(), "sessionkit-session-suite-"));
  const ports: NodeFsStorage[] = [];
  const openPort = () => {
    const port = nodeFsStorage({ root });
    ports.push(port);
    return port;
  };
  const storage = openPort();
  return {
    storage,
    reopen: async () => {
      await storage.close();
      return openPort();
    },
    openSecond: async () => openPort(),
    cleanup: async () => {
      await Promise.all(ports.map((port) => port.close()));
      await rm(root, { recursive: true, force: true });
    },
  };
};

describeSessionManagerSuite("node-fs", nodeFsUnderTest, { persistent: true });
describeSessionManagerSuite("node-fs, seed 003's dialect in a flat store", nodeFsUnderTest, { persistent: true, layout: "seed003" });
