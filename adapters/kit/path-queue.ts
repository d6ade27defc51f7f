/**
 * The per-path operation queue: the operations on one file run one after another in call order
 * (an append never overtakes the write before it), while different files go on at once. node-fs
 * and the OPFS worker port queue every change (and OPFS every read) of a file through one.
 */
export class PathQueue {
  /** path -> tail of the chain of operations queued on it; dropped once the chain is done. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `operation` once every operation queued on `path` before it has settled. */
  run<T>(path: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(path) ?? Promise.resolve();
    const result = previous.then(operation);
    const tail = result.then(ignore, ignore);
    this.tails.set(path, tail);
    void tail.then(() => {
      if (this.tails.get(path) === tail) this.tails.delete(path);
    });
    return result;
  }

  /** True while an operation queued on `path` has not settled. */
  busy(path: string): boolean {
    return this.tails.has(path);
  }

  /** Resolves once every operation queued so far, on any path, has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}

function ignore(): void {}
