/**
 * The per-path operation queue: the operations that change one file run one after another in call
 * order (an append never overtakes the write before it), while different files go on at once.
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
}

function ignore(): void {}
