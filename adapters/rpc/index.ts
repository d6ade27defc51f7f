/** A StoragePort over a message channel, and the server side that exposes any port on one. */
export { rpcClientStorage, type RequestTransport, type RpcClientOptions, type RpcStorage } from "./client.js";
export type { MessageEndpoint } from "./endpoint.js";
export { DEFAULT_CHUNK_BYTES, RPC_PROTOCOL, type RpcRequest, type RpcResponse } from "./protocol.js";
export { handleStorageRequest, serveStorage } from "./server.js";
