/**
 * Any message to the rpc request handler (a connection of `createStorageServer`): it answers,
 * never throws, with
 * a response of the protocol's shape; a message that is not a well-formed request gets the typed
 * error "invalid"; a well-formed one fails only with the port's own typed errors (never "io"
 * from an exception of the server's, only for a connection closed by a `close` call); and after any sequence of such messages the server still
 * serves: a write is read back.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import { createStorageServer, RPC_PROTOCOL } from "../../../adapters/rpc/index.js";
import { protocolSchemas } from "../../../adapters/rpc/protocol.js";
import { SEED, settings } from "./fast-check.js";

const path = fc.oneof(
  fc.constantFrom("sessions/a.jsonl", "blobs/x", "a", "", "/abs", "../up", "a//b", "a/./b", "dir/", "C:\\x", "a\u0000b"),
  fc.string({ maxLength: 12 }),
);
const count = fc.oneof(fc.nat({ max: 64 }), fc.integer(), fc.double(), fc.constant(2 ** 53), fc.constant(-1));
const transferId = fc.oneof(fc.string({ maxLength: 8 }), fc.uuid());
const bytes = fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.string({ maxLength: 8 }), fc.constant(null));
const content = fc.oneof(
  fc.record({ kind: fc.constant("inline"), data: bytes }),
  fc.record({ kind: fc.constant("staged"), transferId, size: count }),
  fc.anything(),
);

/** Calls of every op with fields of the right names and any values (mostly plausible ones). */
const call = fc.oneof(
  fc.record({ op: fc.constant("read"), path, range: fc.option(fc.record({ offset: count, length: fc.option(count, { nil: undefined }) }), { nil: undefined }), maxBytes: count }),
  fc.record({ op: fc.constant("readMore"), transferId, offset: count }),
  fc.record({ op: fc.constant("stat"), path }),
  fc.record({ op: fc.constant("list"), dir: path }),
  fc.record({ op: fc.constant("stage"), transferId, offset: count, data: bytes }),
  fc.record({ op: fc.constantFrom("append", "write"), path, content }),
  fc.record({ op: fc.constant("truncate"), path, size: count }),
  fc.record({ op: fc.constantFrom("remove", "sync"), path }),
  fc.record({ op: fc.constant("acquireLock"), key: path }),
  fc.record({ op: fc.constant("releaseLock"), lockId: transferId }),
  fc.record({ op: fc.constant("close") }),
  fc.record({ op: fc.string({ maxLength: 10 }) }),
  fc.anything(),
);

const message = fc.oneof(
  { weight: 4, arbitrary: fc.record({ protocol: fc.constant(RPC_PROTOCOL), id: fc.oneof(fc.integer(), fc.anything()), call }) },
  { weight: 1, arbitrary: fc.record({ protocol: fc.oneof(fc.constant(RPC_PROTOCOL), fc.string()), id: fc.anything(), call: fc.anything() }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.anything({ withTypedArray: true, withMap: true, withSet: true, withDate: true, withBigInt: true }) },
);

describe(`rpc request handler properties (fast-check, seed ${SEED})`, () => {
  it("answers any message with a response of the protocol, a typed error for a malformed one, and keeps serving", async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 8 }), async (messages) => {
        const server = createStorageServer(memoryStorage());
        const connection = server.connect();
        for (const sent of messages) {
          const response = await connection.handle(sent);
          expect(protocolSchemas().responseSchema.safeParse(response).success, JSON.stringify(response)).toBe(true);
          const wellFormed = protocolSchemas().requestSchema.safeParse(sent).success;
          if (!wellFormed) expect(response).toMatchObject({ ok: false, error: { code: "invalid" } });
          // "io" only for a connection this client closed itself (a `close` call).
          if (wellFormed && !response.ok && !connection.ended) expect(response.error.code, response.error.message).not.toBe("io");
        }
        // The server keeps serving: a new client's write is read back.
        const health = `health/${round++}`;
        const data = new Uint8Array([1, 2, 3]);
        const next = server.connect();
        expect(await next.handle({ protocol: RPC_PROTOCOL, id: 1, call: { op: "write", path: health, content: { kind: "inline", data } } })).toMatchObject({ ok: true });
        expect(await next.handle({ protocol: RPC_PROTOCOL, id: 2, call: { op: "read", path: health, maxBytes: 1024 } })).toMatchObject({ ok: true, result: { data, size: 3 } });
        await server.close();
      }),
      settings(500),
    );
  });
});
