/**
 * The storage rpc protocol: the messages between `rpcClientStorage` and `serveStorage` /
 * `handleStorageRequest`, as zod schemas that both ends validate.
 *
 * Bytes travel as structured-clone copies (moved by a transfer list only where the client is told
 * to: Electron's MessagePortMain drops messages whose transfer list holds a buffer), at most `maxBytes` / the client's chunk size per
 * message. Larger payloads are staged: a big read is snapshotted on the server and fetched in
 * pieces (`readMore`); a big append or write is uploaded in pieces (`stage`) and then committed in
 * one port call, so it stays atomic.
 *
 * Over a message endpoint, requests issued together (in one turn of the event loop, such as the
 * append and the sync of a flush) may travel as one `RpcRequestBatch`, within the same byte bound;
 * the server answers them with one `RpcResponseBatch` once all are done. Each request and response
 * in a batch is validated on its own, as a single one is.
 */
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import { StorageError, type StorageErrorCode } from "../../src/port.js";

/** Marks our messages on an endpoint that may carry other traffic too. */
export const RPC_PROTOCOL = "sessionkit-storage/1";

/** Default bytes per message: big enough to amortize a round trip, small enough for any channel. */
export const DEFAULT_CHUNK_BYTES = 1 << 20;

/**
 * The protocol's schemas, built at their first use rather than when this module loads: a page
 * that holds an rpc client (the served viewer) uses it only after its first screen, and building
 * them with zod's English messages cost about 4 ms of V8's time.
 */
export function protocolSchemas(): ProtocolSchemas {
  return (built ??= buildSchemas());
}
let built: ProtocolSchemas | undefined;
type ProtocolSchemas = ReturnType<typeof buildSchemas>;

function buildSchemas() {
  // zod/mini has no messages of its own ("Invalid input" for every issue); our problems and errors
  // quote them, so English is the default here as classic zod makes it (an app's locale still wins).
  if (!z.config().localeError) z.config(en());
  const count = z.number().check(z.int(), z.nonnegative());
  const bytes = z.instanceof(Uint8Array);
  const transferId = z.string().check(z.minLength(1), z.maxLength(128));

  const byteRange = z.object({ offset: count, length: z.optional(count) });

  /** What an append or write carries: the bytes themselves, or a reference to staged bytes. */
  const content = z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("inline"), data: bytes }),
    z.object({ kind: z.literal("staged"), transferId, size: count }),
  ]);

  const callSchema = z.discriminatedUnion("op", [
    z.object({ op: z.literal("read"), path: z.string(), range: z.optional(byteRange), maxBytes: count.check(z.gte(1)) }),
    z.object({ op: z.literal("readMore"), transferId, offset: count }),
    z.object({ op: z.literal("stat"), path: z.string() }),
    z.object({ op: z.literal("list"), dir: z.string() }),
    z.object({ op: z.literal("stage"), transferId, offset: count, data: bytes }),
    z.object({ op: z.literal("append"), path: z.string(), content }),
    z.object({ op: z.literal("write"), path: z.string(), content }),
    z.object({ op: z.literal("truncate"), path: z.string(), size: count }),
    z.object({ op: z.literal("remove"), path: z.string() }),
    z.object({ op: z.literal("sync"), path: z.string() }),
    z.object({ op: z.literal("acquireLock"), key: z.string() }),
    z.object({ op: z.literal("releaseLock"), lockId: transferId }),
    /** Starts forwarding the served port's changes below `dir` as RpcPush messages; the client names the watch. */
    z.object({ op: z.literal("watch"), watchId: transferId, dir: z.string() }),
    z.object({ op: z.literal("unwatch"), watchId: transferId }),
    /** Nothing but a sign of life, for a server that holds a client's state on a lease. */
    z.object({ op: z.literal("renew") }),
    /** Ends this client's state on the server (locks released, transfers and watches dropped). */
    z.object({ op: z.literal("close") }),
  ]);

  const requestSchema = z.object({
    protocol: z.literal(RPC_PROTOCOL),
    id: z.number().check(z.int()),
    call: callSchema,
  });

  /** The envelope only: each request in it is checked with `requestSchema` when it is handled. */
  const requestBatchSchema = z.object({ protocol: z.literal(RPC_PROTOCOL), requests: z.array(z.unknown()).check(z.minLength(1)) });

  const fileStat = z.object({ size: count, mtimeMs: z.number() });
  const dirEntry = z.object({ name: z.string(), kind: z.enum(["file", "dir"]), size: count, mtimeMs: z.number() });

  /** The result each call resolves with; the client checks every reply against it. */
  const resultSchemas = {
    /** `transferId` is set when more than the first `data.length` of `size` bytes are waiting. */
    read: z.nullable(z.object({ data: bytes, size: count, transferId: z.optional(transferId) })),
    readMore: z.object({ data: bytes }),
    stat: z.nullable(fileStat),
    list: z.array(dirEntry),
    stage: z.null(),
    append: z.null(),
    write: z.null(),
    truncate: z.null(),
    remove: z.null(),
    sync: z.null(),
    acquireLock: z.object({ lockId: transferId }),
    releaseLock: z.null(),
    watch: z.null(),
    unwatch: z.null(),
    renew: z.null(),
    close: z.null(),
  } satisfies Record<z.infer<typeof callSchema>["op"], z.ZodMiniType>;

  /** What the server sends unasked: the paths that changed below a watched directory. */
  const pushSchema = z.object({
    protocol: z.literal(RPC_PROTOCOL),
    push: z.literal("changes"),
    watchId: transferId,
    paths: z.array(z.string()).check(z.minLength(1)),
  });

  const errorCode = z.enum(["not-found", "quota", "locked", "collision", "corrupt", "io", "unsupported", "invalid", "read-only", "forbidden", "limit"]);

  const responseSchema = z.discriminatedUnion("ok", [
    z.object({ protocol: z.literal(RPC_PROTOCOL), id: z.number().check(z.int()), ok: z.literal(true), result: z.unknown() }),
    z.object({
      protocol: z.literal(RPC_PROTOCOL),
      /** null when the request was too malformed to carry an id. */
      id: z.nullable(z.number().check(z.int())),
      ok: z.literal(false),
      error: z.object({ code: errorCode, message: z.string(), path: z.optional(z.string()) }),
    }),
  ]);

  /** The envelope only: each response in it is checked with `responseSchema` by the call it answers. */
  const responseBatchSchema = z.object({ protocol: z.literal(RPC_PROTOCOL), responses: z.array(z.unknown()) });
  return { callSchema, requestSchema, requestBatchSchema, resultSchemas, pushSchema, responseSchema, responseBatchSchema };
}

export type RpcCall = z.infer<ProtocolSchemas["callSchema"]>;
export type RpcOp = RpcCall["op"];

/**
 * One storage call on the wire: `{ protocol, id, call }`, where `call` names the port method in
 * `op` ("read", "append", "watch", ...) with its arguments. What a {@link RequestTransport} sends.
 */
export type RpcRequest = z.infer<ProtocolSchemas["requestSchema"]>;

/** Most requests a client puts in one batch: what a server must accept (`sessionkit serve` refuses more with "limit"). */
export const MAX_BATCH_REQUESTS = 64;

/** Requests sent as one message (at most MAX_BATCH_REQUESTS); the server calls the port for each in order. */
export interface RpcRequestBatch {
  protocol: typeof RPC_PROTOCOL;
  requests: unknown[];
}

/** A change notification from the server: `{ protocol, push: "changes", watchId, paths }`. */
export type RpcPush = z.infer<ProtocolSchemas["pushSchema"]>;

export type RpcResult<Op extends RpcOp> = z.infer<ProtocolSchemas["resultSchemas"][Op]>;

/**
 * The answer to one {@link RpcRequest}, with the request's `id`: `{ ok: true, result }`, or
 * `{ ok: false, error: { code, message, path? } }` carrying a StorageError's fields.
 */
export type RpcResponse = z.infer<ProtocolSchemas["responseSchema"]>;
export type RpcErrorResponse = Extract<RpcResponse, { ok: false }>;

/** The responses to one RpcRequestBatch, in its order. */
export interface RpcResponseBatch {
  protocol: typeof RPC_PROTOCOL;
  responses: RpcResponse[];
}

/** True for a message that claims to be ours (the rest of an endpoint's traffic is ignored). */
export function isRpcMessage(message: unknown): message is { protocol: typeof RPC_PROTOCOL; id?: unknown; requests?: unknown; responses?: unknown; push?: unknown } {
  return typeof message === "object" && message !== null && (message as { protocol?: unknown }).protocol === RPC_PROTOCOL;
}

export function errorResponse(id: number | null, error: StorageError): RpcErrorResponse {
  const wire: RpcErrorResponse["error"] = { code: error.code, message: error.message };
  if (error.path !== undefined) wire.path = error.path;
  return { protocol: RPC_PROTOCOL, id, ok: false, error: wire };
}

export function errorFromResponse(response: RpcErrorResponse): StorageError {
  const { code, message, path } = response.error;
  return new StorageError(code satisfies StorageErrorCode, message, path === undefined ? undefined : { path });
}

/** A zod failure as the StorageError "invalid" a malformed message deserves. */
export function invalidMessage(what: string, error: z.core.$ZodError): StorageError {
  return new StorageError("invalid", `malformed ${what}: ${z.prettifyError(error)}`);
}
