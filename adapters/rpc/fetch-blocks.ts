/**
 * httpStorage's large range reads, by blocks: a read asks the server for BLOCK_BYTES from its
 * offset in one GET and takes its bytes off the response as they arrive; the reads that follow it
 * (each starting where the one before ended, as a session is read front to back) take theirs from
 * the same response; once reads take from a block that the file fills, the next block is asked for
 * ahead, and with the first block when the port's last stat of the file showed it longer than that
 * (each GET waits on the server's thread pool, which a loaded machine schedules late: the second
 * block does not wait for the first's answer too). A block's bytes are taken off the response as
 * they come, whether or not a read waits for them yet, so at most two blocks (32 MiB) are held. A
 * read that its block's file ends within asks whether the file grew (its last byte and the next) as
 * soon as the block's length is known, beside its bytes rather than after them, so the last read
 * of a file does not end on a round trip of its own. A GET costs far more than its bytes (Chromium
 * on loopback, a 50 MB file fetched without parsing: 4 MiB ranges, two at a time, 524–757 ms;
 * 16 MiB blocks, one ahead, 206–368 ms), and the server reads a range of up to 16 MiB in one port
 * call, so each read still sees the file of one moment.
 */
import { StorageError } from "../../src/port.js";

/** Bytes per GET: the most `sessionkit serve` reads in one port call (adapters/server/routes.ts). */
export const BLOCK_BYTES = 16 << 20;

/** A block serves reads for at most this long after it was asked for: the file may change under it. */
const BLOCK_FRESH_MS = 2000;

/** A GET of `range` of `path`: its response, or "missing" when there is no such file, "empty" for a range past its end. */
export type RangeFetch = (path: string, range: { offset: number; length: number }) => Promise<Response | "missing" | "empty">;

/** One GET of a block: the reads it serves take their bytes one after another. */
class Block {
  readonly end: number;
  /** Where the next read from this block must start. */
  next: number;
  /** Reads have taken from it. */
  used = false;
  /** The response holds the whole block: the file reaches the block's end. */
  full = false;
  retired = false;
  /**
   * Where the file ended when the block was read, once its answer is in, for a block it ends
   * before the end of (the response is shorter, or empty); undefined for a full block, or none.
   */
  readonly fileEnd: Promise<number | undefined>;
  private readonly body: Promise<ReadableStreamDefaultReader<Uint8Array> | "missing" | "empty">;
  /** Bytes received and not taken yet. */
  private pieces: Uint8Array[] = [];
  private buffered = 0;
  /** The response has ended (all received, failed or let go). */
  private ended = false;
  private failure: unknown;
  /** A read waiting for more bytes. */
  private waiting: (() => void) | undefined;
  /** Lets the block go once it serves no more reads, so that one nobody reads on holds no bytes. */
  private readonly expiry: ReturnType<typeof setTimeout>;
  /** Settles once every read queued on the block has its bytes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    readonly start: number,
    /** The count of the port's own changes when it was asked for: a later change makes it stale. */
    readonly changes: number,
    response: Promise<Response | "missing" | "empty">,
    onFull: () => void,
  ) {
    this.end = start + BLOCK_BYTES;
    this.next = start;
    this.expiry = setTimeout(() => this.retire(), BLOCK_FRESH_MS);
    (this.expiry as { unref?(): void }).unref?.(); // Node: not a reason to keep running
    this.body = response.then((answer) => {
      if (typeof answer === "string") return answer;
      if (!answer.body) return "empty";
      if (Number(answer.headers.get("content-length")) === BLOCK_BYTES) {
        this.full = true;
        onFull();
      }
      const reader = answer.body.getReader();
      void this.receive(reader);
      return reader;
    });
    this.body.catch(() => {}); // reported to the reads that take from it
    this.fileEnd = response.then(
      (answer) => {
        if (answer === "empty") return start;
        if (answer === "missing") return undefined;
        const length = Number(answer.headers.get("content-length") ?? NaN);
        return Number.isSafeInteger(length) && length < BLOCK_BYTES ? start + length : undefined;
      },
      () => undefined,
    );
  }

  /** Whether a read of `length` bytes at `offset` of `path`, made with `changes` changes behind it, can take from this block. */
  serves(path: string, offset: number, length: number, changes: number): boolean {
    return !this.retired && this.path === path && this.changes === changes && this.next === offset && offset + length <= this.end;
  }

  /** The next `length` bytes, once the reads queued before have theirs: fewer where the file ends first; null when it is missing. */
  take(length: number): Promise<Uint8Array | null> {
    this.used = true;
    this.next += length;
    const taken = this.queue.then(() => this.read(length));
    this.queue = taken.catch(() => {});
    return taken;
  }

  /** No more reads from this block: its response is let go once the queued reads have their bytes. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    clearTimeout(this.expiry);
    void this.queue.then(async () => {
      const body = await this.body.catch(() => null);
      if (typeof body === "object") await body?.cancel().catch(() => {});
      this.pieces = [];
      this.buffered = 0;
    });
  }

  /**
   * Takes the response's bytes as they come, whether or not a read waits for them yet: the
   * transfer goes on while the reader works on what it has (the block's size bounds them).
   */
  private async receive(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.pieces.push(value);
        this.buffered += value.length;
        this.wake();
      }
    } catch (error) {
      this.failure = error;
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  private async read(length: number): Promise<Uint8Array | null> {
    const body = await this.body;
    if (body === "missing") return null;
    if (body === "empty") return new Uint8Array(0);
    while (this.buffered < length && !this.ended) await new Promise<void>((resolve) => (this.waiting = resolve));
    if (this.buffered < length && this.failure !== undefined) {
      throw new StorageError("io", `GET ${this.path}: ${String(this.failure)}`, { path: this.path, cause: this.failure });
    }
    const out = new Uint8Array(Math.min(length, this.buffered));
    for (let at = 0; at < out.length; ) {
      const piece = this.pieces[0]!;
      const used = Math.min(piece.length, out.length - at);
      out.set(piece.subarray(0, used), at);
      at += used;
      if (used === piece.length) this.pieces.shift();
      else this.pieces[0] = piece.subarray(used);
    }
    this.buffered -= out.length;
    return out;
  }
}

/** The blocks of one port: the one reads take from, and at most one asked for ahead of it. */
export class FetchBlocks {
  private blocks: Block[] = [];

  constructor(private readonly fetchRange: RangeFetch) {}

  /**
   * `length` (≤ BLOCK_BYTES) bytes at `offset` of `path`, `changes` being the count of the port's
   * own changes so far and `knownSize` the file's size as last seen, when known: fewer where the
   * file ends, null when it is missing. A read that took from a block asked for before it and came
   * back short is read again by `fetchOwn` if the file has grown since (its last byte then and the
   * next are asked for), and so is one whose block failed.
   */
  async read(
    path: string,
    offset: number,
    length: number,
    changes: number,
    fetchOwn: (path: string, range: { offset: number; length: number }) => Promise<Uint8Array | null>,
    knownSize?: number,
  ): Promise<Uint8Array | null> {
    const found = this.blocks.find((block) => block.serves(path, offset, length, changes));
    if (!found) {
      this.retireAll();
      const opened = this.open(path, offset, changes);
      // A file known to reach past this block has the next one asked for with it, not once this
      // one's answer shows it full (a round trip to the server later); still two blocks at most.
      if (knownSize !== undefined && knownSize > opened.end) this.open(path, opened.end, changes);
      return opened.take(length);
    }
    const taken = found.take(length);
    // Reads have moved on to this block: the ones before it are done with.
    for (const done of this.blocks.splice(0, this.blocks.indexOf(found))) done.retire();
    this.askAhead();
    // A read the block's file ends within asks whether the file grew as soon as the block's length
    // is known: still after the read began, and its round trip overlaps the bytes' transfer.
    const fileEnd = await found.fileEnd;
    const shortAt = fileEnd === undefined || fileEnd >= offset + length ? undefined : Math.max(fileEnd, offset);
    const stillEnds = shortAt === undefined ? undefined : this.endsAt(path, shortAt);
    const bytes = await taken.catch(() => null);
    if (bytes === null) return fetchOwn(path, { offset, length });
    if (bytes.length === length) return bytes;
    const at = offset + bytes.length;
    return (await (at === shortAt ? stillEnds! : this.endsAt(path, at))) ? bytes : fetchOwn(path, { offset, length });
  }

  /**
   * Whether the file still ends at `size` (or before): a block asked for before a read came back
   * short for it, and the file's last byte then and the one after it tell whether it grew since (a
   * GET of the whole range would carry again what the block did). Not the byte after it alone: a
   * file that has not grown answers that with a 416, which a browser logs as a failed load.
   */
  private async endsAt(path: string, size: number): Promise<boolean> {
    const offset = Math.max(0, size - 1);
    const probe = await this.fetchRange(path, { offset, length: size + 1 - offset }).catch(() => null);
    if (probe === "empty") return true;
    if (!(probe instanceof Response)) return false;
    const bytes = await probe.arrayBuffer().catch(() => null);
    return bytes !== null && offset + bytes.byteLength <= size;
  }

  /** The port changed a file, or closes: no read takes from the blocks asked for so far. */
  retireAll(): void {
    for (const block of this.blocks) block.retire();
    this.blocks = [];
  }

  private open(path: string, offset: number, changes: number): Block {
    const block = new Block(path, offset, changes, this.fetchRange(path, { offset, length: BLOCK_BYTES }), () => this.askAhead());
    this.blocks.push(block);
    return block;
  }

  /** Once reads take from the last block and the file fills it, the next block is asked for. */
  private askAhead(): void {
    const last = this.blocks.at(-1);
    if (last && last.used && last.full && !last.retired) this.open(last.path, last.end, last.changes);
  }
}
