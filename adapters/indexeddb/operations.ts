/**
 * What a write batch carries: the operations its callers queued, and the steps they become, with
 * consecutive appends to one file made one append.
 */
import { StorageError } from "../../src/port.js";
import { concat } from "../kit/bytes.js";

/** What a batch does: the mutations, and `sync` when it joins a batch. */
export type BatchOperation =
  | { kind: "append"; path: string; data: Uint8Array }
  | { kind: "write"; path: string; data: Uint8Array }
  | { kind: "truncate"; path: string; size: number }
  | { kind: "remove"; path: string }
  | { kind: "sync"; path: string }
  /** The trailing small records merged (the port's own, when the file is idle): no change of content. */
  | { kind: "merge"; path: string };

export interface QueuedOperation {
  operation: BatchOperation;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One step of a batch: an operation, or several appends to one file merged into one. */
export interface BatchStep {
  operation: BatchOperation;
  callers: QueuedOperation[];
}

/** A batch's failure as seen by one of its callers: same code, naming the caller's operation. */
export function callerError(operation: BatchOperation, error: unknown): unknown {
  if (!(error instanceof StorageError)) return error;
  const { kind, path } = operation;
  return new StorageError(error.code, `${kind} ${JSON.stringify(path)}: ${error.message}`, { path, cause: error });
}

/**
 * Merges consecutive appends to one file (with no other operation on that file between them) into
 * one step, so a burst of appends becomes one chunk record. Operations on different files are
 * independent, so steps keep per-file order only.
 */
export function mergeAppends(batch: QueuedOperation[]): BatchStep[] {
  const steps: (BatchStep & { appended?: Uint8Array[] })[] = [];
  const openAppend = new Map<string, BatchStep & { appended?: Uint8Array[] }>();
  for (const caller of batch) {
    const { operation } = caller;
    const open = openAppend.get(operation.path);
    if (operation.kind === "append" && open?.appended) {
      open.appended.push(operation.data);
      open.callers.push(caller);
      continue;
    }
    const step = { operation, callers: [caller], ...(operation.kind === "append" ? { appended: [operation.data] } : {}) };
    steps.push(step);
    openAppend.set(operation.path, step);
  }
  return steps.map(({ operation, callers, appended }) =>
    appended && appended.length > 1 ? { operation: { kind: "append", path: operation.path, data: concat(appended) }, callers } : { operation, callers },
  );
}
