/** The shared SessionManager suite on PostgreSQL: a fresh schema per test, ports reopened and opened twice over it. */
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";
import { dropSchema, freshSchema, openStorage } from "./helpers.js";

describeSessionManagerSuite(
  "postgres",
  async () => {
    const schema = freshSchema("suite");
    const ports: PostgresStorage[] = [];
    const openPort = () => {
      const port = openStorage(schema, { maxConnections: 3 });
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
        await dropSchema(schema);
      },
    };
  },
  { persistent: true },
);
