/**
 * A StoragePort whose operations run on another thread or process, reached over a message
 * endpoint (Worker, MessagePort, `self` in a worker) or a request function (Electron's
 * `ipcRenderer.invoke`). Replies are validated with zod; a peer that does not answer within
 * `timeoutMs`, reports an error or closes its port fails the call with StorageError "io".
 */
import { StorageError, type ByteRange, type DirEntry, type FileStat, type StorageLock, type StoragePort } from "../../src/port.js";
import { listen, messageData, type MessageEndpoint } from "./endpoint.js";
import {
  DEFAULT_CHUNK_BYTES,
  RPC_PROTOCOL,
  errorFromResponse,
  invalidMessage,
  isRpcMessage,
  responseSchema,
  resultSchemas,
  type RpcCall,
  type RpcOp,
  type RpcRequest,
  type RpcResult,
} from "./protocol.js";

/** Sends one request and resolves with the peer's raw reply (e.g. `(r) => ipcRenderer.invoke("storage", r)`). */
export type RequestTransport = (request: RpcRequest) => Promise<unknown>;

export interface RpcClientOptions {
  /** The port's `kind`; default "rpc". */
  kind?: string;
  /** How long a call waits for its reply before failing with "io"; default 30 s. */
  timeoutMs?: number;
  /** Most payload bytes per message, both ways; default 1 MiB. */
  chunkBytes?: number;
}

export type RpcStorage = StoragePort & {
  sync(path: string): Promise<void>;
  acquireLock(key: string): Promise<StorageLock>;
  /** Closes the served port and stops listening; later calls fail with "io". */
  close(): Promise<void>;
};

const DEFAULT_TIMEOUT_MS = 30_000;

export function rpcClientStorage(transport: MessageEndpoint | RequestTransport, options?: RpcClientOptions): RpcStorage {
  return new RpcClient(transport, options);
}

interface PendingCall {
  label: string;
  resolve: (reply: unknown) => void;
  reject: (error: StorageError) => void;
}

class RpcClient implements RpcStorage {
  readonly kind: string;
  private readonly timeoutMs: number;
  private readonly chunkBytes: number;
  private readonly send: (request: RpcRequest, pending: Omit<PendingCall, "resolve" | "reject">) => Promise<unknown>;
  private readonly pending = new Map<number, PendingCall>();
  private readonly detach: () => void;
  private nextId = 1;
  /** Set once the client is closed or the peer is gone: every later call fails with it. */
  private ended: StorageError | undefined;

  constructor(transport: MessageEndpoint | RequestTransport, options?: RpcClientOptions) {
    this.kind = options?.kind ?? "rpc";
    this.timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.chunkBytes = options?.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (typeof transport === "function") {
      this.send = (request) => transport(request);
      this.detach = () => {};
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
    this.send = (request, { label }) =>
      new Promise((resolve, reject) => {
        this.pending.set(request.id, { label, resolve, reject });
        transport.postMessage(request);
      });
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
    await this.call({ op: "append", path, content: await this.content(data, path) }, path);
  }

  async write(path: string, data: Uint8Array): Promise<void> {
    await this.call({ op: "write", path, content: await this.content(data, path) }, path);
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

  async acquireLock(key: string): Promise<StorageLock> {
    const { lockId } = await this.call({ op: "acquireLock", key }, key);
    let released: Promise<void> | undefined;
    return {
      release: () => (released ??= this.call({ op: "releaseLock", lockId }, key).then(() => undefined)),
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
   * An append's or write's payload: inline when it fits one message, else uploaded in pieces
   * first, so the server commits it in one port call (a big write stays atomic).
   */
  private async content(data: Uint8Array, path: string): Promise<Extract<RpcCall, { op: "write" }>["content"]> {
    // Copies (slice): the caller may reuse its buffer, and a view would clone its whole buffer.
    if (data.length <= this.chunkBytes) return { kind: "inline", data: data.slice() };
    const transferId = crypto.randomUUID();
    for (let offset = 0; offset < data.length; offset += this.chunkBytes) {
      await this.call({ op: "stage", transferId, offset, data: data.slice(offset, offset + this.chunkBytes) }, path);
    }
    return { kind: "staged", transferId, size: data.length };
  }

  /** Sends one call and returns its validated result; every failure is a StorageError. */
  private async call<Op extends RpcOp>(call: Extract<RpcCall, { op: Op }>, about: string): Promise<RpcResult<Op>> {
    const label = `rpc ${call.op}${about === "" ? "" : ` ${about}`}`;
    if (this.ended) throw new StorageError("io", `${label}: ${this.ended.message}`);
    const request: RpcRequest = { protocol: RPC_PROTOCOL, id: this.nextId++, call };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StorageError("io", `${label}: no reply from the storage peer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    let reply: unknown;
    try {
      reply = await Promise.race([this.send(request, { label }), timeout]);
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError("io", `${label}: the request could not be sent: ${String(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      this.pending.delete(request.id);
    }
    const response = responseSchema.safeParse(reply);
    if (!response.success) throw invalidMessage(`reply to ${label}`, response.error);
    if (!response.data.ok) throw errorFromResponse(response.data);
    if (response.data.id !== request.id) {
      throw new StorageError("invalid", `${label}: reply ${response.data.id} to request ${request.id}`);
    }
    const result = resultSchemas[call.op].safeParse(response.data.result);
    if (!result.success) throw invalidMessage(`result of ${label}`, result.error);
    return result.data as RpcResult<Op>;
  }

  /** Routes a reply from the endpoint to its call, which validates it; one naming no call is dropped. */
  private receive(message: unknown): void {
    if (!isRpcMessage(message) || !("ok" in message) || typeof message.id !== "number") return;
    this.pending.get(message.id)?.resolve(message);
  }

  /** Fails every pending and future call: the client is closed or the peer is gone. */
  private end(reason: string): void {
    if (this.ended) return;
    this.ended = new StorageError("io", reason);
    for (const call of this.pending.values()) call.reject(new StorageError("io", `${call.label}: ${reason}`));
    this.pending.clear();
  }
}

function describeErrorEvent(event: Event): string {
  const { message, filename, lineno } = event as ErrorEvent;
  if (typeof message === "string" && message !== "") return filename ? `${message} (${filename}:${lineno})` : message;
  return "error event";
}
