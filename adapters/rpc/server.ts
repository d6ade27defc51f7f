/**
 * The server side of the storage rpc: exposes any StoragePort to rpc clients, over a message
 * endpoint (`serveStorage`) or one request at a time (`handleStorageRequest`, for
 * request/response channels such as Electron's ipcMain.handle).
 */
import { StorageError, type StorageLock, type StoragePort } from "../../src/port.js";
import { listen, messageData, type MessageEndpoint } from "./endpoint.js";
import {
  RPC_PROTOCOL,
  errorResponse,
  invalidMessage,
  isRpcMessage,
  requestBatchSchema,
  requestSchema,
  type RpcCall,
  type RpcResponse,
  type RpcResponseBatch,
} from "./protocol.js";

/** Staged transfers a client stops pulling or pushing (it died mid-way) are dropped after this. */
const STAGED_TTL_MS = 120_000;

interface ReadTransfer {
  data: Uint8Array;
  maxBytes: number;
  touchedMs: number;
}

interface Upload {
  parts: Uint8Array[];
  size: number;
  touchedMs: number;
}

/** What a served port remembers between requests: staged transfers and held locks. */
interface ServerState {
  reads: Map<string, ReadTransfer>;
  uploads: Map<string, Upload>;
  locks: Map<string, StorageLock>;
}

const serverStates = new WeakMap<StoragePort, ServerState>();

function stateOf(port: StoragePort): ServerState {
  let state = serverStates.get(port);
  if (!state) {
    state = { reads: new Map(), uploads: new Map(), locks: new Map() };
    serverStates.set(port, state);
  }
  return state;
}

/**
 * Answers one rpc request against `port`. Never throws: failures, including a malformed
 * request (StorageError "invalid"), come back as error responses carrying the StorageError code.
 * State between requests (staged transfers, locks) is kept per port.
 */
export async function handleStorageRequest(port: StoragePort, request: unknown): Promise<RpcResponse> {
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) {
    // Echoed only when the reply can carry it (the protocol takes safe integers).
    const id = isRpcMessage(request) && Number.isSafeInteger(request.id) ? (request.id as number) : null;
    return errorResponse(id, invalidMessage("storage request", parsed.error));
  }
  const { id, call } = parsed.data;
  const state = stateOf(port);
  dropStale(state, Date.now());
  try {
    return { protocol: RPC_PROTOCOL, id, ok: true, result: await perform(port, state, call) };
  } catch (error) {
    return errorResponse(id, asStorageError(error, call));
  }
}

/**
 * Serves `port` on a message endpoint (e.g. `serveStorage(port, self)` in a worker). Messages
 * that are not rpc requests are ignored. Requests are handed to the port in the order they
 * arrive (each port call starts before the next message is looked at); a batch of requests is
 * answered with one message once all are done. Returns a function that stops serving.
 */
export function serveStorage(port: StoragePort, endpoint: MessageEndpoint): () => void {
  const stop = listen(endpoint, "message", (event) => {
    const message = messageData(event);
    if (!isRpcMessage(message) || "ok" in message || "responses" in message) return; // other traffic, or a response
    if ("requests" in message) {
      const batch = requestBatchSchema.safeParse(message);
      if (!batch.success) return reply(endpoint, errorResponse(null, invalidMessage("storage request batch", batch.error)));
      void Promise.all(batch.data.requests.map((request) => handleStorageRequest(port, request))).then((responses) => replyAll(endpoint, responses));
      return;
    }
    void handleStorageRequest(port, message).then((response) => reply(endpoint, response));
  });
  endpoint.start?.();
  return stop;
}

function replyAll(endpoint: MessageEndpoint, responses: RpcResponse[]): void {
  try {
    endpoint.postMessage({ protocol: RPC_PROTOCOL, responses } satisfies RpcResponseBatch);
  } catch {
    // A result could not be cloned: send them one by one, so only that call fails.
    for (const response of responses) reply(endpoint, response);
  }
}

function reply(endpoint: MessageEndpoint, response: RpcResponse): void {
  try {
    endpoint.postMessage(response);
  } catch (error) {
    // The result could not be cloned: tell the client rather than let it time out.
    const failure = new StorageError("io", `the storage reply could not be sent: ${String(error)}`);
    endpoint.postMessage(errorResponse(response.id, failure));
  }
}

async function perform(port: StoragePort, state: ServerState, call: RpcCall): Promise<unknown> {
  switch (call.op) {
    case "read": {
      const data = await port.read(call.path, call.range);
      if (data === null) return null;
      if (data.length <= call.maxBytes) return { data, size: data.length };
      // A snapshot, so the pieces the client pulls all come from this one read.
      const transferId = crypto.randomUUID();
      state.reads.set(transferId, { data, maxBytes: call.maxBytes, touchedMs: Date.now() });
      return { data: data.slice(0, call.maxBytes), size: data.length, transferId };
    }
    case "readMore": {
      const transfer = state.reads.get(call.transferId);
      if (!transfer) throw new StorageError("invalid", `unknown or expired read transfer ${call.transferId}`);
      transfer.touchedMs = Date.now();
      const end = call.offset + transfer.maxBytes;
      if (end >= transfer.data.length) state.reads.delete(call.transferId);
      // slice, not subarray: a view would clone the whole snapshot buffer into the message.
      return { data: transfer.data.slice(call.offset, end) };
    }
    case "stat":
      return port.stat(call.path);
    case "list":
      return port.list(call.dir);
    case "stage": {
      const upload = state.uploads.get(call.transferId) ?? { parts: [], size: 0, touchedMs: 0 };
      if (call.offset !== upload.size) {
        state.uploads.delete(call.transferId);
        throw new StorageError("invalid", `staged piece at ${call.offset} where ${upload.size} was expected`);
      }
      upload.parts.push(call.data);
      upload.size += call.data.length;
      upload.touchedMs = Date.now();
      state.uploads.set(call.transferId, upload);
      return null;
    }
    case "append":
      await port.append(call.path, contentBytes(state, call.content));
      return null;
    case "write":
      await port.write(call.path, contentBytes(state, call.content));
      return null;
    case "truncate":
      await port.truncate(call.path, call.size);
      return null;
    case "remove":
      await port.remove(call.path);
      return null;
    case "sync":
      if (!port.sync) throw new StorageError("unsupported", `the ${port.kind} port has no sync`, { path: call.path });
      await port.sync(call.path);
      return null;
    case "acquireLock": {
      if (!port.acquireLock) throw new StorageError("unsupported", `the ${port.kind} port has no locks`, { path: call.key });
      const lock = await port.acquireLock(call.key);
      const lockId = crypto.randomUUID();
      state.locks.set(lockId, lock);
      return { lockId };
    }
    case "releaseLock": {
      const lock = state.locks.get(call.lockId);
      state.locks.delete(call.lockId);
      await lock?.release();
      return null;
    }
    case "close":
      await port.close?.();
      return null;
  }
}

type Content = Extract<RpcCall, { op: "append" }>["content"];

/** The bytes an append or write carries: inline, or its finished upload (consumed here). */
function contentBytes(state: ServerState, content: Content): Uint8Array {
  if (content.kind === "inline") return content.data;
  const upload = state.uploads.get(content.transferId);
  state.uploads.delete(content.transferId);
  if (!upload || upload.size !== content.size) {
    throw new StorageError("invalid", `staged upload ${content.transferId} has ${upload?.size ?? 0} of ${content.size} bytes`);
  }
  const data = new Uint8Array(upload.size);
  let offset = 0;
  for (const part of upload.parts) {
    data.set(part, offset);
    offset += part.length;
  }
  return data;
}

function dropStale(state: ServerState, nowMs: number): void {
  for (const transfers of [state.reads, state.uploads]) {
    for (const [id, transfer] of transfers) if (nowMs - transfer.touchedMs > STAGED_TTL_MS) transfers.delete(id);
  }
}

function asStorageError(error: unknown, call: RpcCall): StorageError {
  if (error instanceof StorageError) return error;
  const path = "path" in call ? call.path : undefined;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StorageError("io", `${call.op} failed: ${detail}`, { ...(path === undefined ? {} : { path }), cause: error });
}
