/** Waiting for conditions rather than for fixed times: tests stay right on a loaded machine. Universal APIs only. */

/** Checks `condition` every `intervalMs` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
