/**
 * Bounded concurrency with results in order: members are read and files written a few at a time
 * (so one's I/O waits overlap another's work), while progress, errors and decisions stay in the
 * order of the items, as if they ran one by one.
 */

/**
 * Runs `work` on every item, at most `limit` at a time, and gives each result to `onResult` in
 * item order. On the first failure in item order no more work starts; the work under way is
 * waited for (nothing is left running behind the caller), then that failure is thrown.
 */
export async function forEachInOrder<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  onResult: (result: R, item: T, index: number) => void = () => {},
): Promise<void> {
  const pending: (Promise<R> | undefined)[] = [];
  let next = 0;
  const startNext = () => {
    const index = next++;
    const promise = work(items[index]!, index);
    // Awaited below in its turn; this only keeps a failure that comes first from being unhandled.
    promise.catch(() => {});
    pending[index] = promise;
  };
  while (next < items.length && next < limit) startNext();
  for (let index = 0; index < items.length; index++) {
    try {
      const result = await pending[index]!;
      pending[index] = undefined;
      if (next < items.length) startNext();
      onResult(result, items[index]!, index);
    } catch (error) {
      await Promise.allSettled(pending.slice(index + 1).filter((promise) => promise !== undefined));
      throw error;
    }
  }
}

/**
 * The results of `work` on every item, in item order, with up to `limit` items started ahead of
 * the one the caller is at (so their I/O overlaps the caller's work on it). When the caller stops
 * or a work fails, the work under way is waited for before the generator returns or throws.
 */
export async function* inOrderAhead<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): AsyncGenerator<R, void, undefined> {
  const pending: Promise<R>[] = [];
  let next = 0;
  try {
    for (;;) {
      while (next < items.length && pending.length < limit) {
        const promise = work(items[next]!, next++);
        // Awaited in its turn; this only keeps a failure that comes first from being unhandled.
        promise.catch(() => {});
        pending.push(promise);
      }
      const first = pending.shift();
      if (!first) return;
      yield await first;
    }
  } finally {
    await Promise.allSettled(pending);
  }
}
