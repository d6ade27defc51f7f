/**
 * The web APIs that Node 20 and browsers both have, as far as code that must run in both uses them.
 * The projects that type-check such code (tsconfig.core.json: src/; tsconfig.adapters-universal.json:
 * the adapters with no environment of their own) have ES2023, this file and nothing else, so a use
 * of a DOM-only global (document, window, indexedDB, navigator) or a Node one (Buffer, process)
 * fails to compile. TypeScript declares these APIs only inside lib.dom (with everything a page has)
 * and @types/node (with Buffer and process): the members below are lib.dom's, trimmed to what is
 * used and to what Node 20 also has (no Blob.bytes(), which came in Node 22).
 */
export {};

declare global {
  // Encoding
  interface TextEncoderEncodeIntoResult {
    read: number;
    written: number;
  }
  interface TextEncoder {
    readonly encoding: string;
    encode(input?: string): Uint8Array<ArrayBuffer>;
    encodeInto(source: string, destination: Uint8Array): TextEncoderEncodeIntoResult;
  }
  var TextEncoder: { prototype: TextEncoder; new (): TextEncoder };
  interface TextDecoderOptions {
    fatal?: boolean;
    ignoreBOM?: boolean;
  }
  interface TextDecodeOptions {
    stream?: boolean;
  }
  interface TextDecoder {
    readonly encoding: string;
    readonly fatal: boolean;
    readonly ignoreBOM: boolean;
    decode(input?: ArrayBuffer | ArrayBufferView, options?: TextDecodeOptions): string;
  }
  var TextDecoder: { prototype: TextDecoder; new (label?: string, options?: TextDecoderOptions): TextDecoder };

  // Web Crypto
  interface SubtleCrypto {
    digest(algorithm: string | { name: string }, data: ArrayBuffer | ArrayBufferView<ArrayBuffer>): Promise<ArrayBuffer>;
  }
  interface Crypto {
    readonly subtle: SubtleCrypto;
    getRandomValues<T extends ArrayBufferView | null>(array: T): T;
    randomUUID(): `${string}-${string}-${string}-${string}-${string}`;
  }
  var crypto: Crypto;

  // Timers and tasks: a handle is a number in browsers and an object in Node, so it is opaque here.
  interface TimerHandle {
    readonly __timerHandle?: never;
  }
  function setTimeout(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): TimerHandle;
  function clearTimeout(handle: TimerHandle | undefined): void;
  function setInterval(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): TimerHandle;
  function clearInterval(handle: TimerHandle | undefined): void;
  function queueMicrotask(callback: () => void): void;
  function structuredClone<T = any>(value: T, options?: { transfer?: any[] }): T;

  interface URL {
    hash: string;
    host: string;
    hostname: string;
    href: string;
    readonly origin: string;
    pathname: string;
    port: string;
    protocol: string;
    search: string;
    toString(): string;
  }
  var URL: { prototype: URL; new (url: string | URL, base?: string | URL): URL };

  // Streams
  interface QueuingStrategy<T = any> {
    highWaterMark?: number;
    size?(chunk: T): number;
  }
  interface StreamPipeOptions {
    preventAbort?: boolean;
    preventCancel?: boolean;
    preventClose?: boolean;
  }
  interface ReadableStreamReadDoneResult<T> {
    done: true;
    value?: T;
  }
  interface ReadableStreamReadValueResult<T> {
    done: false;
    value: T;
  }
  type ReadableStreamReadResult<T> = ReadableStreamReadValueResult<T> | ReadableStreamReadDoneResult<T>;
  interface ReadableStreamDefaultReader<R = any> {
    readonly closed: Promise<void>;
    cancel(reason?: any): Promise<void>;
    read(): Promise<ReadableStreamReadResult<R>>;
    releaseLock(): void;
  }
  interface ReadableStreamDefaultController<R = any> {
    readonly desiredSize: number | null;
    close(): void;
    enqueue(chunk?: R): void;
    error(reason?: any): void;
  }
  interface UnderlyingDefaultSource<R = any> {
    start?(controller: ReadableStreamDefaultController<R>): any;
    pull?(controller: ReadableStreamDefaultController<R>): void | PromiseLike<void>;
    cancel?(reason?: any): void | PromiseLike<void>;
  }
  interface ReadableStream<R = any> {
    readonly locked: boolean;
    cancel(reason?: any): Promise<void>;
    getReader(): ReadableStreamDefaultReader<R>;
    pipeThrough<T>(transform: ReadableWritablePair<T, R>, options?: StreamPipeOptions): ReadableStream<T>;
    pipeTo(destination: WritableStream<R>, options?: StreamPipeOptions): Promise<void>;
    tee(): [ReadableStream<R>, ReadableStream<R>];
  }
  var ReadableStream: { prototype: ReadableStream; new <R = any>(underlyingSource?: UnderlyingDefaultSource<R>, strategy?: QueuingStrategy<R>): ReadableStream<R> };
  interface WritableStreamDefaultController {
    error(reason?: any): void;
  }
  interface UnderlyingSink<W = any> {
    start?(controller: WritableStreamDefaultController): any;
    write?(chunk: W, controller: WritableStreamDefaultController): void | PromiseLike<void>;
    close?(): void | PromiseLike<void>;
    abort?(reason?: any): void | PromiseLike<void>;
  }
  interface WritableStreamDefaultWriter<W = any> {
    readonly closed: Promise<void>;
    readonly desiredSize: number | null;
    readonly ready: Promise<void>;
    abort(reason?: any): Promise<void>;
    close(): Promise<void>;
    releaseLock(): void;
    write(chunk?: W): Promise<void>;
  }
  interface WritableStream<W = any> {
    readonly locked: boolean;
    abort(reason?: any): Promise<void>;
    close(): Promise<void>;
    getWriter(): WritableStreamDefaultWriter<W>;
  }
  var WritableStream: { prototype: WritableStream; new <W = any>(underlyingSink?: UnderlyingSink<W>, strategy?: QueuingStrategy<W>): WritableStream<W> };
  interface ReadableWritablePair<R = any, W = any> {
    readable: ReadableStream<R>;
    writable: WritableStream<W>;
  }
  interface TransformStreamDefaultController<O = any> {
    readonly desiredSize: number | null;
    enqueue(chunk?: O): void;
    error(reason?: any): void;
    terminate(): void;
  }
  interface Transformer<I = any, O = any> {
    start?(controller: TransformStreamDefaultController<O>): any;
    transform?(chunk: I, controller: TransformStreamDefaultController<O>): void | PromiseLike<void>;
    flush?(controller: TransformStreamDefaultController<O>): void | PromiseLike<void>;
  }
  interface TransformStream<I = any, O = any> {
    readonly readable: ReadableStream<O>;
    readonly writable: WritableStream<I>;
  }
  var TransformStream: {
    prototype: TransformStream;
    new <I = any, O = any>(transformer?: Transformer<I, O>, writableStrategy?: QueuingStrategy<I>, readableStrategy?: QueuingStrategy<O>): TransformStream<I, O>;
  };
  type CompressionFormat = "deflate" | "deflate-raw" | "gzip";
  interface DecompressionStream {
    readonly readable: ReadableStream<Uint8Array<ArrayBuffer>>;
    readonly writable: WritableStream<ArrayBuffer | ArrayBufferView<ArrayBuffer>>;
  }
  var DecompressionStream: { prototype: DecompressionStream; new (format: CompressionFormat): DecompressionStream };

  // Blob (a File from a picker, fs.openAsBlob in Node)
  interface BlobPropertyBag {
    type?: string;
  }
  interface Blob {
    readonly size: number;
    readonly type: string;
    arrayBuffer(): Promise<ArrayBuffer>;
    slice(start?: number, end?: number, contentType?: string): Blob;
    stream(): ReadableStream<Uint8Array<ArrayBuffer>>;
    text(): Promise<string>;
  }
  var Blob: { prototype: Blob; new (blobParts?: (ArrayBuffer | ArrayBufferView<ArrayBuffer> | Blob | string)[], options?: BlobPropertyBag): Blob };
}
