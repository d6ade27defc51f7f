/** Long-running commands (serve, sync --watch) end on Ctrl+C or SIGTERM. */

/** Resolves on the first SIGINT or SIGTERM, and stops listening for them then. */
export function untilInterrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
