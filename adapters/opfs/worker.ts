/**
 * The OPFS storage worker: owns the sync access handles and serves the port to the page that
 * started it (see `opfsStorage`) over the storage rpc.
 */
import type { MessageEndpoint } from "../rpc/endpoint.js";
import { serveStorage } from "../rpc/server.js";
import { decodeWorkerName } from "./worker-config.js";
import { opfsWorkerStorage } from "./worker-storage.js";

serveStorage(opfsWorkerStorage(decodeWorkerName(self.name)), self as unknown as MessageEndpoint);
