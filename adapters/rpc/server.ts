/**
 * The server side of the storage rpc: exposes a StoragePort to rpc clients.
 *
 * `createStorageServer(port, options)` serves one port to many clients. Each client connection
 * (`server.connect()`) has state of its own (staged transfers, held locks, watches) that no other
 * client can name: ids are per client, so a client can never read, finish or release another's
 * transfer or lock. A connection ends when its transport says the client is gone (`close()`), when
 * the client sends `close`, or when its lease runs out: a client connected with `leaseMs` must be
 * heard from (any call, or `renew`) at least that often. An ended connection releases its locks and
 * answers every later request with "io".
 *
 * `serveStorage` (serve-endpoint.ts) serves a port this way to the one client at the other end of
 * a message endpoint.
 */
import { StorageError, type StorageLock, type StoragePort, type StorageWatch } from "../../src/port.js";
import { readOnlyStorage } from "../read-only.js";
import { scopedStorage } from "../scoped.js";
import { CallTurns } from "./call-turns.js";
import { pathHider } from "./path-hider.js";
import {
  RPC_PROTOCOL,
  errorResponse,
  invalidMessage,
  isRpcMessage,
  protocolSchemas,
  type RpcCall,
  type RpcOp,
  type RpcPush,
  type RpcResponse,
  type RpcResponseBatch,
} from "./protocol.js";

/** Staged transfers a client stops pulling or pushing (it died mid-way) are dropped after this. */
const STAGED_TTL_MS = 120_000;
/** How long changes are gathered before one push carries them. */
const PUSH_GATHER_MS = 5;

/**
 * Caps on what one client may make the server hold or do at once. Each is unbounded unless set
 * (`sessionkit serve` sets them all: adapters/server/server.ts). A request over a cap fails with
 * StorageError "limit"; the client's other requests, and other clients, go on.
 */
export interface StorageServerLimits {
  /** Requests in one batch message; a longer batch is refused as a whole, each of its requests with "limit". */
  maxBatchRequests?: number;
  /** Port calls of one client under way at once; later ones wait their turn, in the order they came. */
  maxCallsInFlight?: number;
  /**
   * Bytes of reads one client's connection holds: snapshots it has not pulled yet (`readMore`) and
   * replies not yet handed to its transport. A read that would take it past this fails with
   * "limit" (a file larger than this, read in one call, too); transports stop taking the client's
   * messages while this much of its replies is unsent.
   */
  maxHeldBytes?: number;
  /** Bytes of uploads (`stage`) one client holds before committing them; a piece past this fails with "limit" and drops its upload. */
  maxStagedBytes?: number;
}

/**
 * What a storage server lets its clients do: everything by default. The server serves `port`
 * through `readOnlyStorage` and `scopedStorage` (adapters/read-only.ts, adapters/scoped.ts) as they ask.
 */
export interface StorageServerOptions {
  /** Refuse every call that would change the store (locks and `stage` too) with StorageError "read-only". */
  readOnly?: boolean;
  /**
   * The only paths clients may touch: these directories (storage paths, e.g. ["sessions", "blobs"])
   * and everything below them. Other paths are refused with "forbidden"; a listing or watch of a
   * directory above them shows only what lies on the way to them. Default: every path.
   */
  paths?: readonly string[];
  /**
   * With `readOnly`: directories (storage paths) below which clients may still change files, and
   * may then `stage` (an Electron app's opt-in writable folders). Default none.
   */
  writablePaths?: readonly string[];
  /** Caps on each client's work; default none. */
  limits?: StorageServerLimits;
  /**
   * Directories of the server's file system, each with the storage path it holds ("" for the
   * store's root, ".sessionkit" for a mounted cache): error messages sent to clients name the
   * storage path instead. Any other absolute path in a message (one the client did not send) is
   * replaced by "<server path>". Default none (only that replacement).
   */
  hostPaths?: Readonly<Record<string, string>>;
}

/** Options of {@link StorageServer.connect}: where the client's pushes go, and its lease. */
export interface ConnectOptions {
  /** Where this client's pushes (watch notifications) go; without it, `watch` is "unsupported". */
  push?: (message: RpcPush) => void;
  /** The client must be heard from at least this often, or its connection ends. Default: no lease. */
  leaseMs?: number;
  /** Called once when the connection ends (closed, lease run out, server closed). */
  onEnd?: (reason: string) => void;
}

/**
 * Serves one StoragePort to many rpc clients, over any transport: the transport calls
 * {@link StorageServer.connect} for each client and hands it that client's requests.
 */
export interface StorageServer {
  /** The port served. */
  readonly port: StoragePort;
  /** True when changes are refused (`readOnly` option). */
  readonly readOnly: boolean;
  /** The caps on each client (`limits` option; Infinity where unset), for transports to apply too. */
  readonly limits: Readonly<Required<StorageServerLimits>>;
  /** A new client: its locks, transfers and watches are its own, released when it ends. */
  connect(options?: ConnectOptions): ClientConnection;
  /** Ends every connection (their locks are released). The port stays open: its owner closes it. */
  close(): Promise<void>;
}

/**
 * One client of a {@link StorageServer}: a transport hands it the client's requests and sends
 * back the responses. It ends on `close()`, on the client's own `close` request, or when its
 * lease runs out; an ended connection has released its locks and answers everything with "io".
 */
export interface ClientConnection {
  /** Answers one request (never throws: failures, a malformed request included, are error responses). */
  handle(request: unknown): Promise<RpcResponse>;
  /** Answers a batch (`{protocol, requests}`), each request on its own, in order of arrival. */
  handleBatch(message: unknown): Promise<RpcResponseBatch | RpcResponse>;
  /** Ends the connection: releases its locks, drops its transfers and watches. Idempotent. */
  close(reason?: string): Promise<void>;
  /** True once the connection has ended. */
  readonly ended: boolean;
  /** Locks this client holds now. */
  readonly lockCount: number;
}

/**
 * A server for `port` that any transport can use (WebSocket, HTTP, Electron ipc): each client gets
 * a {@link ClientConnection} of its own. Closing the server ends the connections, not the port.
 */
export function createStorageServer(port: StoragePort, options: StorageServerOptions = {}): StorageServer {
  const readOnly = options.readOnly ?? false;
  const scoped = options.paths === undefined ? port : scopedStorage(port, { paths: options.paths });
  const writablePaths = options.writablePaths ?? [];
  const served = readOnly ? readOnlyStorage(scoped, { except: writablePaths }) : scoped;
  const limits = {
    maxBatchRequests: options.limits?.maxBatchRequests ?? Infinity,
    maxCallsInFlight: options.limits?.maxCallsInFlight ?? Infinity,
    maxHeldBytes: options.limits?.maxHeldBytes ?? Infinity,
    maxStagedBytes: options.limits?.maxStagedBytes ?? Infinity,
  };
  const policy: Policy = { kind: port.kind, mayStage: !readOnly || writablePaths.length > 0, limits, hidePaths: pathHider(options.hostPaths ?? {}), hostDirs: Object.keys(options.hostPaths ?? {}) };
  const connections = new Set<Connection>();
  return {
    port,
    readOnly,
    limits,
    connect(connectOptions = {}) {
      const connection = new Connection(served, policy, connectOptions, () => connections.delete(connection));
      connections.add(connection);
      return connection;
    },
    async close() {
      await Promise.all([...connections].map((connection) => connection.close("the storage server closed")));
    },
  };
}

/** What every connection of one server shares. */
interface Policy {
  /** The kind of the port underneath, as messages name it. */
  kind: string;
  /** Whether clients may upload staged bytes: the store, or some paths of it, take changes. */
  mayStage: boolean;
  limits: Required<StorageServerLimits>;
  /** An error message as a client may see it: no absolute path of the server's. */
  hidePaths: (message: string) => string;
  /** The server's directories of `hostPaths`: an "invalid" message that names one is hidden too. */
  hostDirs: readonly string[];
}

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

/** Calls that need no port call of their own: they run at once, outside the in-flight cap. */
const UNGATED_OPS = new Set<RpcOp>(["readMore", "stage", "renew", "close"]);

class Connection implements ClientConnection {
  private readonly reads = new Map<string, ReadTransfer>();
  private readonly uploads = new Map<string, Upload>();
  private readonly locks = new Map<string, StorageLock>();
  private readonly watches = new Map<string, Promise<StorageWatch | null>>();
  private endReason: string | undefined;
  private leaseTimer: ReturnType<typeof setTimeout> | undefined;
  /** Paths gathered per watch until the next push. */
  private readonly pendingPushes = new Map<string, Set<string>>();
  private pushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Bytes of reads held: snapshots not pulled yet, and read data in replies not returned yet. */
  private heldBytes = 0;
  /** Bytes of the uploads staged so far. */
  private stagedBytes = 0;
  private readonly turns: CallTurns;

  constructor(
    /** The served port, its read-only and path policies applied. */
    private readonly port: StoragePort,
    private readonly policy: Policy,
    private readonly options: ConnectOptions,
    private readonly onClosed: () => void,
  ) {
    this.turns = new CallTurns(policy.limits, () => this.heldBytes, () => this.endReason);
    this.renewLease();
  }

  get ended(): boolean {
    return this.endReason !== undefined;
  }

  get lockCount(): number {
    return this.locks.size;
  }

  async handle(request: unknown): Promise<RpcResponse> {
    const { response, replyBytes } = await this.answer(request);
    this.heldBytes -= replyBytes;
    return response;
  }

  async handleBatch(message: unknown): Promise<RpcResponseBatch | RpcResponse> {
    const batch = protocolSchemas().requestBatchSchema.safeParse(message);
    if (!batch.success) return errorResponse(null, invalidMessage("storage request batch", batch.error));
    const { requests } = batch.data;
    const { maxBatchRequests } = this.policy.limits;
    if (requests.length > maxBatchRequests) {
      const refused = new StorageError("limit", `a batch of ${requests.length} requests is over this server's limit of ${maxBatchRequests}`);
      return { protocol: RPC_PROTOCOL, responses: requests.map((request) => errorResponse(requestId(request), refused)) };
    }
    // Each port call starts before the next request is looked at, so calls keep their order.
    const answers = await Promise.all(requests.map((request) => this.answer(request)));
    for (const { replyBytes } of answers) this.heldBytes -= replyBytes;
    return { protocol: RPC_PROTOCOL, responses: answers.map(({ response }) => response) };
  }

  async close(reason = "the storage connection is closed"): Promise<void> {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    clearTimeout(this.leaseTimer);
    clearTimeout(this.pushTimer);
    this.onClosed();
    for (const transfer of this.reads.values()) this.heldBytes -= transfer.data.length;
    this.reads.clear();
    this.uploads.clear();
    this.stagedBytes = 0;
    this.turns.endWaiting();
    const locks = [...this.locks.values()];
    this.locks.clear();
    const watches = [...this.watches.values()];
    this.watches.clear();
    await Promise.all([
      ...locks.map((lock) => lock.release().catch(() => {})),
      ...watches.map(async (watch) => (await watch.catch(() => null))?.close()),
    ]);
    this.options.onEnd?.(reason);
  }

  /** The response to one request, and the bytes of read data in it (held until the caller returns it). */
  private async answer(request: unknown): Promise<{ response: RpcResponse; replyBytes: number }> {
    const parsed = protocolSchemas().requestSchema.safeParse(request);
    if (!parsed.success) return { response: errorResponse(requestId(request), invalidMessage("storage request", parsed.error)), replyBytes: 0 };
    const { id, call } = parsed.data;
    if (this.endReason !== undefined) return { response: errorResponse(id, new StorageError("io", `${call.op}: ${this.endReason}`)), replyBytes: 0 };
    this.renewLease();
    this.dropStale(Date.now());
    try {
      const result = UNGATED_OPS.has(call.op) ? await this.perform(call, Infinity) : await this.turns.run(call, (share) => this.perform(call, share));
      const data = (result as { data?: unknown } | null)?.data;
      return { response: { protocol: RPC_PROTOCOL, id, ok: true, result }, replyBytes: data instanceof Uint8Array ? data.length : 0 };
    } catch (error) {
      return { response: errorResponse(id, this.shown(asStorageError(error, call))), replyBytes: 0 };
    }
  }

  /** `error` as the client may see it: its message without the server's absolute paths. */
  private shown(error: StorageError): StorageError {
    // An "invalid" error is about what the client sent: its own paths stay as it wrote them, unless
    // the port's message names a directory of the server's (node-fs quotes Node's, as for a name too long).
    const hide = error.code !== "invalid" || this.policy.hostDirs.some((dir) => error.message.includes(dir));
    const message = hide ? this.policy.hidePaths(error.message) : error.message;
    return message === error.message ? error : new StorageError(error.code, message, error.path === undefined ? undefined : { path: error.path });
  }

  private renewLease(): void {
    const { leaseMs } = this.options;
    if (leaseMs === undefined) return;
    clearTimeout(this.leaseTimer);
    this.leaseTimer = setTimeout(() => void this.close(`the client's lease of ${leaseMs} ms ran out`), leaseMs);
    (this.leaseTimer as { unref?(): void }).unref?.();
  }

  /** Performs one call; a read brings at most `share` bytes (more fails with "limit"). */
  private async perform(call: RpcCall, share: number): Promise<unknown> {
    const { port } = this;
    switch (call.op) {
      case "read": {
        // Asked for one byte more than its share, the port shows a file that does not fit without reading all of it.
        const capped = share < (call.range?.length ?? Infinity);
        const data = await port.read(call.path, capped ? { offset: call.range?.offset ?? 0, length: share + 1 } : call.range);
        if (data === null) return null;
        if (capped && data.length > share) {
          throw new StorageError("limit", `read refused: ${call.path} holds more than the ${share} bytes this client may still be sent at once (its limit: ${this.policy.limits.maxHeldBytes})`, { path: call.path });
        }
        if (data.length <= call.maxBytes) {
          this.heldBytes += data.length;
          return { data, size: data.length };
        }
        // A snapshot, so the pieces the client pulls all come from this one read.
        const transferId = crypto.randomUUID();
        this.reads.set(transferId, { data, maxBytes: call.maxBytes, touchedMs: Date.now() });
        const first = data.slice(0, call.maxBytes);
        this.heldBytes += data.length + first.length;
        return { data: first, size: data.length, transferId };
      }
      case "readMore": {
        const transfer = this.reads.get(call.transferId);
        if (!transfer) throw new StorageError("invalid", `unknown or expired read transfer ${call.transferId}`);
        transfer.touchedMs = Date.now();
        const end = call.offset + transfer.maxBytes;
        if (end >= transfer.data.length) {
          this.reads.delete(call.transferId);
          this.heldBytes -= transfer.data.length;
        }
        // slice, not subarray: a view would clone the whole snapshot buffer into the message.
        const piece = transfer.data.slice(call.offset, end);
        this.heldBytes += piece.length;
        return { data: piece };
      }
      case "stat":
        return port.stat(call.path);
      case "list":
        return port.list(call.dir);
      case "stage": {
        // Staging only buffers bytes for a later write: a read-only server has no use for them.
        if (!this.policy.mayStage) throw new StorageError("read-only", "stage refused: the store is served read-only");
        const upload = this.uploads.get(call.transferId) ?? { parts: [], size: 0, touchedMs: 0 };
        if (call.offset !== upload.size) {
          this.dropUpload(call.transferId);
          throw new StorageError("invalid", `staged piece at ${call.offset} where ${upload.size} was expected`);
        }
        const { maxStagedBytes } = this.policy.limits;
        if (this.stagedBytes + call.data.length > maxStagedBytes) {
          this.dropUpload(call.transferId);
          throw new StorageError("limit", `stage refused: ${this.stagedBytes + call.data.length} bytes staged would be over this server's limit of ${maxStagedBytes}`);
        }
        upload.parts.push(call.data);
        upload.size += call.data.length;
        upload.touchedMs = Date.now();
        this.stagedBytes += call.data.length;
        this.uploads.set(call.transferId, upload);
        return null;
      }
      case "append":
        await port.append(call.path, this.contentBytes(call.content));
        return null;
      case "write":
        await port.write(call.path, this.contentBytes(call.content));
        return null;
      case "truncate":
        await port.truncate(call.path, call.size);
        return null;
      case "remove":
        await port.remove(call.path);
        return null;
      case "sync":
        if (!port.sync) throw new StorageError("unsupported", `the ${this.policy.kind} port has no sync`, { path: call.path });
        await port.sync(call.path);
        return null;
      case "acquireLock": {
        if (!port.acquireLock) throw new StorageError("unsupported", `the ${this.policy.kind} port has no locks`, { path: call.key });
        const lock = await port.acquireLock(call.key);
        if (this.endReason !== undefined) {
          // The client went away while the lock was being taken: nobody would ever release it.
          await lock.release();
          throw new StorageError("io", `acquireLock: ${this.endReason}`, { path: call.key });
        }
        const lockId = crypto.randomUUID();
        this.locks.set(lockId, lock);
        return { lockId };
      }
      case "releaseLock": {
        const lock = this.locks.get(call.lockId);
        this.locks.delete(call.lockId);
        await lock?.release();
        return null;
      }
      case "watch":
        return this.watch(call.watchId, call.dir);
      case "unwatch": {
        const watch = this.watches.get(call.watchId);
        this.watches.delete(call.watchId);
        this.pendingPushes.delete(call.watchId);
        await (await watch?.catch(() => null))?.close();
        return null;
      }
      case "renew":
        return null;
      case "close":
        await this.close("the client closed its connection");
        return null;
    }
  }

  private async watch(watchId: string, dir: string): Promise<null> {
    const { push } = this.options;
    if (!push) throw new StorageError("unsupported", "this connection carries no pushes: watch is not available", { path: dir });
    if (!this.port.watch) throw new StorageError("unsupported", `the ${this.policy.kind} port cannot watch`, { path: dir });
    if (this.watches.has(watchId)) throw new StorageError("invalid", `watch ${watchId} already exists`);
    const started = this.port.watch(dir, (path) => this.gather(watchId, path));
    this.watches.set(
      watchId,
      started.catch(() => null),
    );
    const watch = await started.catch((error: unknown) => {
      this.watches.delete(watchId);
      throw error;
    });
    if (this.endReason !== undefined || !this.watches.has(watchId)) await watch.close();
    return null;
  }

  /** Changes that come in a burst (an append and its sync, several files) travel as one push. */
  private gather(watchId: string, path: string): void {
    if (this.endReason !== undefined || !this.watches.has(watchId)) return;
    const paths = this.pendingPushes.get(watchId) ?? new Set();
    paths.add(path);
    this.pendingPushes.set(watchId, paths);
    this.pushTimer ??= setTimeout(() => {
      this.pushTimer = undefined;
      const pending = [...this.pendingPushes];
      this.pendingPushes.clear();
      for (const [id, paths] of pending) {
        if (!this.watches.has(id)) continue;
        try {
          this.options.push?.({ protocol: RPC_PROTOCOL, push: "changes", watchId: id, paths: [...paths] });
        } catch {
          // The transport is going away; its close ends this connection.
        }
      }
    }, PUSH_GATHER_MS);
  }

  /** The bytes an append or write carries: inline, or its finished upload (consumed here). */
  private contentBytes(content: Extract<RpcCall, { op: "append" }>["content"]): Uint8Array {
    if (content.kind === "inline") return content.data;
    const upload = this.uploads.get(content.transferId);
    this.dropUpload(content.transferId);
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

  private dropUpload(transferId: string): void {
    this.stagedBytes -= this.uploads.get(transferId)?.size ?? 0;
    this.uploads.delete(transferId);
  }

  private dropStale(nowMs: number): void {
    for (const [id, transfer] of this.reads) {
      if (nowMs - transfer.touchedMs <= STAGED_TTL_MS) continue;
      this.reads.delete(id);
      this.heldBytes -= transfer.data.length;
    }
    for (const [id, upload] of this.uploads) if (nowMs - upload.touchedMs > STAGED_TTL_MS) this.dropUpload(id);
  }
}

/** The id of a request, when it carries one a reply can echo (the protocol takes safe integers). */
function requestId(request: unknown): number | null {
  return isRpcMessage(request) && Number.isSafeInteger(request.id) ? (request.id as number) : null;
}



function asStorageError(error: unknown, call: RpcCall): StorageError {
  if (error instanceof StorageError) return error;
  const path = "path" in call ? call.path : undefined;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StorageError("io", `${call.op} failed: ${detail}`, { ...(path === undefined ? {} : { path }), cause: error });
}
