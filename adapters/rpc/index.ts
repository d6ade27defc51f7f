/**
 * A StoragePort over a message channel, and the server side that exposes any port on one (the HTTP client: `sessionkit/adapters/http`).
 *
 * @module sessionkit/adapters/rpc
 */
export { rpcClientStorage, type RequestTransport, type RpcClientOptions, type RpcStorage } from "./client.js";
export type { MessageEndpoint } from "./endpoint.js";
export { decodeFrame, encodeFrame, FRAME_CONTENT_TYPE } from "./frame.js";
export { webSocketEndpoint, type WebSocketLike } from "./websocket.js";
export { DEFAULT_CHUNK_BYTES, RPC_PROTOCOL, type RpcPush, type RpcRequest, type RpcResponse } from "./protocol.js";
export {
  createStorageServer,
  type ClientConnection,
  type ConnectOptions,
  type StorageServer,
  type StorageServerLimits,
  type StorageServerOptions,
} from "./server.js";
export { serveStorage, type ServeStorageOptions } from "./serve-endpoint.js";
