/** SessionManager.follow on the Node-side ports; the same suite runs in Chromium (test/browser/follow.test.ts). */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { describeFollowSuite } from "../shared/follow-suite.js";

describeFollowSuite("memory (one port)", async () => {
  const port = memoryStorage();
  return { writer: port, reader: port };
});

for (const watchMode of ["auto", "poll"] as const) {
  describeFollowSuite(`node-fs, the writer on a port of its own (watch: ${watchMode === "auto" ? "fs.watch" : "polling"})`, async () => {
    const root = await mkdtemp(join(tmpdir(), "sessionkit-follow-"));
    const writer = nodeFsStorage({ root });
    const reader = nodeFsStorage({ root, watchMode, pollIntervalMs: 50 });
    return {
      writer,
      reader,
      cleanup: async () => {
        await Promise.all([writer.close(), reader.close()]);
        await rm(root, { recursive: true, force: true });
      },
    };
  });
}

describeFollowSuite("a port without watch (polled every 1 s)", async () => {
  const { watch: _watch, ...port } = memoryStorage();
  return { writer: port, reader: port };
});
