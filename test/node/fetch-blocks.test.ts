/** httpStorage's block reads (adapters/rpc/fetch-blocks.ts) against responses whose bytes the test hands out. */
import { describe, expect, it } from "vitest";
import { FetchBlocks, type RangeFetch } from "../../adapters/rpc/fetch-blocks.js";

/** A 206 of `length` bytes whose body gives out only what `send` is given. */
function heldResponse(length: number): { response: Response; send(bytes: Uint8Array): void; end(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    response: new Response(body, { status: 206, headers: { "content-length": String(length) } }),
    send: (bytes) => controller.enqueue(bytes),
    end: () => controller.close(),
  };
}

describe("FetchBlocks", () => {
  it("a read that the file ends within asks whether the file grew as soon as the block's length is known, before its bytes have come", async () => {
    const file = new TextEncoder().encode("0123456789"); // a 10-byte file: the block comes back short
    const block = heldResponse(file.length);
    const asked: string[] = [];
    const fetchRange: RangeFetch = (_path, range) => {
      asked.push(`${range.offset}+${range.length}`);
      // The first GET is the block; the next, its last byte and the one after: the file has not grown (one byte comes back).
      return Promise.resolve(asked.length === 1 ? block.response : new Response(file.subarray(range.offset, range.offset + range.length), { status: 206 }));
    };
    const blocks = new FetchBlocks(fetchRange);
    const fetchOwn = () => Promise.reject(new Error("no read should be fetched anew"));
    block.send(file.subarray(0, 4));
    expect(await blocks.read("s.jsonl", 0, 4, 0, fetchOwn)).toEqual(file.subarray(0, 4));
    const rest = blocks.read("s.jsonl", 4, 16, 0, fetchOwn);
    // Bytes 4–9 have not come yet, and the question is already asked.
    await expect.poll(() => asked).toEqual([`0+${16 << 20}`, "9+2"]);
    block.send(file.subarray(4));
    block.end();
    expect(await rest).toEqual(file.subarray(4));
    blocks.retireAll();
  });

  it("a first read of a file known to reach past its block asks for the next block with it, before the first one answers", async () => {
    const block = 16 << 20;
    const asked: string[] = [];
    // Answers that never come: only what is asked for, and when, is looked at.
    const blocks = new FetchBlocks((_path, range) => (asked.push(`${range.offset}+${range.length}`), new Promise<never>(() => {})));
    const fetchOwn = () => Promise.reject(new Error("unexpected"));
    void blocks.read("big.jsonl", 0, 4 << 20, 0, fetchOwn, 2 * block + 1);
    expect(asked).toEqual([`0+${block}`, `${block}+${block}`]);
    // A file not known to be longer than the block: one GET, the next waits for its answer.
    void blocks.read("small.jsonl", 0, 4 << 20, 0, fetchOwn, block);
    void blocks.read("unknown.jsonl", 0, 4 << 20, 0, fetchOwn);
    expect(asked.slice(2)).toEqual([`0+${block}`, `0+${block}`]);
    blocks.retireAll();
  });

  it("a read the block ends within is fetched anew when the file grew since the block was read", async () => {
    const file = new TextEncoder().encode("0123456789abcdef");
    const block = heldResponse(10);
    let gets = 0;
    // The probe (bytes 9 and 10) is answered from the file as it is now: both are there.
    const blocks = new FetchBlocks((_path, range) => Promise.resolve(++gets === 1 ? block.response : new Response(file.subarray(range.offset, range.offset + range.length), { status: 206 })));
    block.send(file.subarray(0, 10));
    block.end();
    expect(await blocks.read("s.jsonl", 0, 4, 0, () => Promise.reject(new Error("unexpected")))).toEqual(file.subarray(0, 4));
    const fetchedAnew: string[] = [];
    const grown = await blocks.read("s.jsonl", 4, 12, 0, (_path, range) => (fetchedAnew.push(`${range.offset}+${range.length}`), Promise.resolve(file.subarray(4, 16))));
    expect([grown, fetchedAnew]).toEqual([file.subarray(4, 16), ["4+12"]]);
    blocks.retireAll();
  });
});
