/**
 * The OPFS storage worker: owns the sync access handles and serves the port to the page that
 * started it (see `opfsStorage`) over the storage rpc. In dist it is one file without imports
 * (scripts/build-assets.ts), so that it runs wherever it is copied; the name says whose it is there.
 */
import type { MessageEndpoint } from "../rpc/endpoint.js";
import { serveStorage } from "../rpc/serve-endpoint.js";
import { decodeWorkerName } from "./worker-config.js";
import { opfsWorkerStorage } from "./worker-storage.js";

serveStorage(opfsWorkerStorage(decodeWorkerName(self.name)), self as unknown as MessageEndpoint);
