/**
 * Two web types Node 20 has (its TextDecoder global, node:stream/web's ReadableWritablePair) that
 * @types/node 20 declares only as a value or only in its module, not as global types: code shared
 * with browsers names them as lib.dom does.
 */
import type { TextDecoder as NodeTextDecoder } from "node:util";
import type { ReadableWritablePair as NodeReadableWritablePair } from "node:stream/web";

declare global {
  interface TextDecoder extends NodeTextDecoder {}
  type ReadableWritablePair<R = any, W = any> = NodeReadableWritablePair<R, W>;
}
