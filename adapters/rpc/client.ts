/**
 * A StoragePort whose operations run on another thread or process, reached over a message
 * endpoint (Worker, MessagePort, `self` in a worker) or a request function (Electron's
 * `ipcRenderer.invoke`). Replies are validated with zod; a peer that does not answer within
 * `timeoutMs`, reports an error or closes its port fails the call with StorageError "io".
 *
 * Calls reach the server in the order they were made (the server calls its port in the order
 * requests arrive), so operations on one path keep their order even when issued together, e.g.
 * an append and the sync after it. A payload too big for one message is uploaded first; calls
 * made meanwhile wait until its commit is sent. Over an endpoint, calls made in one turn of the
 * event loop travel as one message (up to `chunkBytes` of payload), and so do their replies.
 */
import {
  StorageError,
  checkStoragePath,
  writeFilesThenSync,
  type ByteRange,
  type DirEntry,
  type FileStat,
  type FileToWrite,
  type FullStoragePort,
  type StorageLock,
  type StorageWatch,
} from "../../src/port.js";
import { listen, messageData, type MessageEndpoint } from "./endpoint.js";
import {
  DEFAULT_CHUNK_BYTES,
  MAX_BATCH_REQUESTS,
  RPC_PROTOCOL,
  errorFromResponse,
  invalidMessage,
  isRpcMessage,
  protocolSchemas,
  type RpcCall,
  type RpcOp,
  type RpcRequest,
  type RpcRequestBatch,
  type RpcResult,
} from "./protocol.js";

/** Sends one request and resolves with the peer's raw reply (e.g. `(r) => ipcRenderer.invoke("storage", r)`). */
export type RequestTransport = (request: RpcRequest) => Promise<unknown>;

/** Options of {@link rpcClientStorage}. */
export interface RpcClientOptions {
  /** The port's `kind`; default "rpc". */
  kind?: string;
  /** How long a call waits for its reply before failing with "io"; default 30 s. */
  timeoutMs?: number;
  /** Most payload bytes per message, both ways; default 1 MiB. */
  chunkBytes?: number;
  /**
   * Over an endpoint, move the bytes of appends and writes to the peer (a transfer list) instead of
   * having postMessage copy the client's own copy of them once more. For a Worker or a MessagePort;
   * not for Electron's MessagePortMain, which drops a message whose transfer list holds a buffer.
   * Default false.
   */
  transfer?: boolean;
  /**
   * Over a request function, how the server's pushes (watch notifications) reach this client:
   * subscribes a listener, returns the function that unsubscribes. Over an endpoint they arrive
   * on the endpoint. Without it, `watch` fails with "unsupported".
   */
  subscribe?: (listener: (message: unknown) => void) => () => void;
  /**
   * Sends a sign of life this often, for servers that hold a client's locks on a lease (see
   * createStorageServer's `leaseMs`); off by default.
   */
  heartbeatMs?: number;
}

/**
 * A port whose calls go to a storage server: every optional method is there, and each fails as
 * the served port's does (StorageError "unsupported" where it lacks one). `sync` is the served
 * port's; a lock is the served port's, held by the server for this client until released or the
 * client closes; `watch` reports the served port's changes, forwarded by the server; `close` ends
 * this client's state on the server (its locks are released) and stops listening, and later calls
 * fail with "io".
 */
export type RpcStorage = FullStoragePort;

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A StoragePort whose calls run on another thread or process, where {@link serveStorage} (or
 * {@link createStorageServer}) serves a port: over a message endpoint (a Worker, a MessagePort,
 * `self` in a worker, a WebSocket through {@link webSocketEndpoint}) or a request function
 * (Electron's `ipcRenderer.invoke`). A call that gets no answer within `timeoutMs`, or whose
 * channel closes, fails with StorageError "io".
 */
export function rpcClientStorage(transport: MessageEndpoint | RequestTransport, options?: RpcClientOptions): RpcStorage {
  return new RpcClient(transport, options);
}

interface PendingCall {
  label: string;
  /** performance.now() after which the call fails. */
  deadline: number;
  resolve: (reply: unknown) => void;
  reject: (error: StorageError) => void;
}

/** Requests waiting for the end of the current turn, to be posted as one message. */
interface Outbox {
  requests: RpcRequest[];
  /** Payload bytes the requests and their replies may carry. */
  bytes: number;
  /** The buffers of the requests' own bytes, moved with the message (the `transfer` option). */
  transfer: ArrayBuffer[];
}

/** Node's timers can be told not to keep the process alive; browsers' are plain numbers. */
type Timer = ReturnType<typeof setTimeout> & { ref?(): void; unref?(): void };

class RpcClient implements RpcStorage {
  readonly kind: string;
  private readonly timeoutMs: number;
  private readonly chunkBytes: number;
  private readonly transfer: boolean;
  /** Hands one request to the transport; the reply arrives through `settle`. */
  private readonly transmit: (request: RpcRequest) => void;
  private readonly pending = new Map<number, PendingCall>();
  private readonly detach: () => void;
  /** Watches by id: the server's pushes name them. */
  private readonly watches = new Map<string, (path: string) => void>();
  private readonly canWatch: boolean;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private nextId = 1;
  /** Set once the client is closed or the peer is gone: every later call fails with it. */
  private ended: StorageError | undefined;
  /** One timer for every pending call: it fires at the earliest deadline. */
  private watchdog: Timer | undefined;
  private outbox: Outbox | undefined;
  /**
   * Set while an upload is being sent: calls made meanwhile are posted after its commit, in call
   * order. Resolves once the last of them has been posted.
   */
  private queue: Promise<void> | undefined;

  constructor(transport: MessageEndpoint | RequestTransport, options?: RpcClientOptions) {
    this.kind = options?.kind ?? "rpc";
    this.timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.chunkBytes = options?.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    this.transfer = options?.transfer ?? false;
    this.canWatch = typeof transport !== "function" || options?.subscribe !== undefined;
    if (options?.heartbeatMs !== undefined) {
      this.heartbeat = setInterval(() => void this.call({ op: "renew" }, "").catch(() => {}), options.heartbeatMs);
      (this.heartbeat as Timer).unref?.();
    }
    if (typeof transport === "function") {
      this.transmit = (request) => {
        let sent: Promise<unknown>;
        try {
          sent = transport(request);
        } catch (error) {
          sent = Promise.reject(error);
        }
        sent.then(
          (reply) => this.settle(request.id, reply),
          (error: unknown) => this.fail(request.id, (label) => notSent(label, error)),
        );
      };
      this.detach = options?.subscribe?.((message) => this.receive(message)) ?? (() => {});
      return;
    }
    const stops = [
      listen(transport, "message", (event) => this.receive(messageData(event))),
      // A Worker reports a failed script or an uncaught exception: treat the peer as dead, and
      // report it through the failed calls rather than as an uncaught error of the page.
      listen(transport, "error", (event) => {
        event.preventDefault();
        this.end(`the storage peer failed: ${describeErrorEvent(event)}`);
      }),
      // MessagePorts (browsers since 2024, Node) announce the other side closing.
      listen(transport, "close", () => this.end("the storage peer closed the channel")),
    ];
    this.detach = () => stops.forEach((stop) => stop());
    this.transmit = (request) => this.enqueue(transport, request);
    transport.start?.();
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    const first = await this.call({ op: "read", path, ...(range ? { range } : {}), maxBytes: this.chunkBytes }, path);
    if (first === null || first.transferId === undefined) return first?.data ?? null;
    const out = new Uint8Array(first.size);
    out.set(first.data);
    for (let offset = first.data.length; offset < first.size; ) {
      const { data } = await this.call({ op: "readMore", transferId: first.transferId, offset }, path);
      if (data.length === 0 || offset + data.length > first.size) {
        throw new StorageError("invalid", `rpc read ${path}: piece of ${data.length} bytes at ${offset} of ${first.size}`, { path });
      }
      out.set(data, offset);
      offset += data.length;
    }
    return out;
  }

  stat(path: string): Promise<FileStat | null> {
    return this.call({ op: "stat", path }, path);
  }

  list(dir: string): Promise<DirEntry[]> {
    return this.call({ op: "list", dir }, dir);
  }

  async append(path: string, data: Uint8Array): Promise<void> {
    await this.store("append", path, data);
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    await this.store("write", path, data);
  }

  async truncate(path: string, size: number): Promise<void> {
    await this.call({ op: "truncate", path, size }, path);
  }

  async remove(path: string): Promise<void> {
    await this.call({ op: "remove", path }, path);
  }

  async sync(path: string): Promise<void> {
    await this.call({ op: "sync", path }, path);
  }

  /** The served port's `write` of each file, then its `sync` of each: no message of its own. */
  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    return writeFilesThenSync(this, files);
  }

  async acquireLock(key: string): Promise<StorageLock> {
    const { lockId } = await this.call({ op: "acquireLock", key }, key);
    let released: Promise<void> | undefined;
    return {
      release: () => (released ??= this.call({ op: "releaseLock", lockId }, key).then(() => undefined)),
    };
  }

  async watch(dir: string, onChange: (path: string) => void): Promise<StorageWatch> {
    checkStoragePath(dir, { allowRoot: true });
    if (!this.canWatch) throw new StorageError("unsupported", `rpc watch ${dir}: this transport carries no server pushes (pass subscribe)`, { path: dir });
    // Named here, so that a push arriving before the reply already finds its watcher.
    const watchId = crypto.randomUUID();
    this.watches.set(watchId, onChange);
    try {
      await this.call({ op: "watch", watchId, dir }, dir);
    } catch (error) {
      this.watches.delete(watchId);
      throw error;
    }
    let closed: Promise<void> | undefined;
    return {
      close: () =>
        (closed ??= (async () => {
          this.watches.delete(watchId);
          if (!this.ended) await this.call({ op: "unwatch", watchId }, dir).catch(() => {});
        })()),
    };
  }

  async close(): Promise<void> {
    if (this.ended) return;
    try {
      await this.call({ op: "close" }, "");
    } finally {
      this.end("the storage port is closed");
      this.detach();
    }
  }

  /**
   * An append or write: inline when it fits one message, else uploaded in pieces first and then
   * committed in one call, so the server makes one port call (a big write stays atomic).
   */
  private store(op: "append" | "write", path: string, data: Uint8Array): Promise<null> {
    // Copies (slice): the caller may reuse its buffer, and a view would clone its whole buffer.
    if (data.length <= this.chunkBytes) return this.call({ op, path, content: { kind: "inline", data: data.slice() } }, path);
    const label = `rpc ${op} ${path}`;
    return new Promise((resolve, reject) => {
      this.inOrder(async () => {
        try {
          const transferId = crypto.randomUUID();
          for (let offset = 0; offset < data.length; offset += this.chunkBytes) {
            const piece = { op: "stage", transferId, offset, data: data.slice(offset, offset + this.chunkBytes) } as const;
            await this.checked(piece, label, this.post(piece, label));
          }
          const commit = { op, path, content: { kind: "staged", transferId, size: data.length } } as const;
          this.checked(commit, label, this.post(commit, label)).then(resolve, reject);
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /** Sends one call, after the uploads made before it, and returns its validated result. */
  private call<Op extends RpcOp>(call: Extract<RpcCall, { op: Op }>, about: string): Promise<RpcResult<Op>> {
    const label = `rpc ${call.op}${about === "" ? "" : ` ${about}`}`;
    if (!this.queue) return this.checked(call, label, this.post(call, label));
    return new Promise((resolve, reject) => this.inOrder(() => void this.checked(call, label, this.post(call, label)).then(resolve, reject)));
  }

  /**
   * Runs `send` once everything queued before it has been posted. Until it is done (an upload
   * posts its commit last), later calls queue behind it.
   */
  private inOrder(send: () => void | Promise<void>): void {
    // Each send reports its own failure to its caller; the queue goes on.
    const link = (this.queue ?? Promise.resolve()).then(send).catch(() => {});
    this.queue = link;
    void link.then(() => {
      if (this.queue === link) this.queue = undefined;
    });
  }

  /** Posts one request; resolves with the raw reply, or fails with "io" (timeout, peer gone, not sent). */
  private post(call: RpcCall, label: string): Promise<unknown> {
    if (this.ended) return Promise.reject(new StorageError("io", `${label}: ${this.ended.message}`));
    const request: RpcRequest = { protocol: RPC_PROTOCOL, id: this.nextId++, call };
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { label, deadline: performance.now() + this.timeoutMs, resolve, reject });
      this.armWatchdog();
      this.transmit(request);
    });
  }

  /** The result of a reply to `call`, validated; every failure is a StorageError. */
  private async checked<Op extends RpcOp>(call: Extract<RpcCall, { op: Op }>, label: string, reply: Promise<unknown>): Promise<RpcResult<Op>> {
    const response = protocolSchemas().responseSchema.safeParse(await reply);
    if (!response.success) throw invalidMessage(`reply to ${label}`, response.error);
    if (!response.data.ok) throw errorFromResponse(response.data);
    const result = protocolSchemas().resultSchemas[call.op].safeParse(response.data.result);
    if (!result.success) throw invalidMessage(`result of ${label}`, result.error);
    return result.data as RpcResult<Op>;
  }

  /**
   * Collects the requests of this turn into one message, posted at the end of the turn (or as
   * soon as the next request would take it past `chunkBytes` of payload or MAX_BATCH_REQUESTS).
   */
  private enqueue(endpoint: MessageEndpoint, request: RpcRequest): void {
    const bytes = payloadBound(request.call);
    if (this.outbox && (this.outbox.bytes + bytes > this.chunkBytes || this.outbox.requests.length === MAX_BATCH_REQUESTS)) this.postOutbox(endpoint);
    if (!this.outbox) {
      const outbox: Outbox = { requests: [], bytes: 0, transfer: [] };
      this.outbox = outbox;
      queueMicrotask(() => {
        if (this.outbox === outbox) this.postOutbox(endpoint);
      });
    }
    this.outbox.requests.push(request);
    this.outbox.bytes += bytes;
    const own = this.transfer ? ownBytes(request.call) : undefined;
    if (own) this.outbox.transfer.push(own.buffer as ArrayBuffer);
  }

  private postOutbox(endpoint: MessageEndpoint): void {
    const { requests, transfer } = this.outbox ?? { requests: [], transfer: [] };
    this.outbox = undefined;
    const post = (message: unknown, moved: ArrayBuffer[]) => (moved.length > 0 ? endpoint.postMessage(message, moved) : endpoint.postMessage(message));
    if (requests.length > 1) {
      const batch: RpcRequestBatch = { protocol: RPC_PROTOCOL, requests };
      try {
        return post(batch, transfer);
      } catch {
        // Something in the batch cannot be cloned (nothing was moved then): send them one by one, so only that call fails.
      }
    }
    for (const request of requests) {
      try {
        const own = this.transfer ? ownBytes(request.call) : undefined;
        post(request, own ? [own.buffer as ArrayBuffer] : []);
      } catch (error) {
        this.fail(request.id, (label) => notSent(label, error));
      }
    }
  }

  /** Routes a reply (or a batch of them) from the endpoint to its calls; one naming no call is dropped. */
  private receive(message: unknown): void {
    if (!isRpcMessage(message)) return;
    if ("push" in message) {
      const push = protocolSchemas().pushSchema.safeParse(message);
      const onChange = push.success ? this.watches.get(push.data.watchId) : undefined;
      if (push.success && onChange) for (const path of push.data.paths) onChange(path);
      return;
    }
    if ("responses" in message) {
      const batch = protocolSchemas().responseBatchSchema.safeParse(message);
      if (!batch.success) return;
      for (const response of batch.data.responses) this.receive(response);
      return;
    }
    if ("ok" in message && typeof message.id === "number") this.settle(message.id, message);
  }

  /** Hands a raw reply to its call, which validates it. */
  private settle(id: number, reply: unknown): void {
    const call = this.take(id);
    const replyId = isRpcMessage(reply) ? reply.id : undefined;
    // A request function may hand back anything: a reply to another request is not ours.
    if (typeof replyId === "number" && replyId !== id) call?.reject(new StorageError("invalid", `${call.label}: reply ${replyId} to request ${id}`));
    else call?.resolve(reply);
  }

  private fail(id: number, error: (label: string) => StorageError): void {
    const call = this.take(id);
    call?.reject(error(call.label));
  }

  /** Removes a call from the pending ones; an idle client's watchdog must not keep Node running. */
  private take(id: number): PendingCall | undefined {
    const call = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.watchdog?.unref?.();
    return call;
  }

  /** Makes sure the watchdog will fire by the earliest deadline (the newest call's is the latest). */
  private armWatchdog(): void {
    if (this.watchdog) return void this.watchdog.ref?.();
    this.watchdog = setTimeout(() => this.expire(), this.timeoutMs) as Timer;
  }

  /** Fails the calls past their deadline and sets the watchdog for the next one. */
  private expire(): void {
    this.watchdog = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const [id, call] of this.pending) {
      if (call.deadline > now) next = Math.min(next, call.deadline);
      else this.fail(id, (label) => new StorageError("io", `${label}: no reply from the storage peer within ${this.timeoutMs} ms`));
    }
    if (next !== Infinity) this.watchdog = setTimeout(() => this.expire(), next - now) as Timer;
  }

  /** Fails every pending and future call: the client is closed or the peer is gone. */
  private end(reason: string): void {
    if (this.ended) return;
    this.ended = new StorageError("io", reason);
    for (const call of this.pending.values()) call.reject(new StorageError("io", `${call.label}: ${reason}`));
    this.pending.clear();
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    clearInterval(this.heartbeat);
    this.watches.clear();
  }
}

/** Most payload bytes a call and its reply may carry, to keep a batched message within chunkBytes. */
function payloadBound(call: RpcCall): number {
  switch (call.op) {
    case "read":
      return call.maxBytes;
    case "stage":
      return call.data.length;
    case "append":
    case "write":
      return call.content.kind === "inline" ? call.content.data.length : 0;
    default:
      return 0;
  }
}

/** The bytes a call carries that the client made for it (a copy of the caller's), which it may move to the peer. */
function ownBytes(call: RpcCall): Uint8Array | undefined {
  if (call.op === "stage") return call.data;
  if ((call.op === "append" || call.op === "write") && call.content.kind === "inline") return call.content.data;
  return undefined;
}

function notSent(label: string, error: unknown): StorageError {
  if (error instanceof StorageError) return error;
  return new StorageError("io", `${label}: the request could not be sent: ${String(error)}`, { cause: error });
}

function describeErrorEvent(event: Event): string {
  const { message, filename, lineno } = event as ErrorEvent;
  if (typeof message === "string" && message !== "") return filename ? `${message} (${filename}:${lineno})` : message;
  return "error event";
}
