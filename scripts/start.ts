/**
 * `npm start`: builds the viewer (web-demo/dist) when its sources are newer than the build, then
 * serves the build on 127.0.0.1 (a free port, or $PORT) and prints the URL. This is the static
 * mode: sessions live in the browser (IndexedDB or OPFS; import by picker or drop). The served
 * mode over the user's agent stores comes with `sessionkit serve` (see web-demo/README.md).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, preview } from "vite";

const viewer = fileURLToPath(new URL("../web-demo", import.meta.url));
const config = join(viewer, "vite.config.ts");
const built = join(viewer, "dist", "index.html");

/** The newest modification time below `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const sources = Math.max(newest(join(viewer, "src")), newest(fileURLToPath(new URL("../src", import.meta.url))), statSync(config).mtimeMs);
if (!existsSync(built) || statSync(built).mtimeMs < sources) {
  process.stdout.write("building the viewer…\n");
  await build({ configFile: config, logLevel: "warn" });
}
const server = await preview({ configFile: config, preview: { host: "127.0.0.1", port: Number(process.env.PORT ?? 0), strictPort: process.env.PORT !== undefined, open: false } });
const url = server.resolvedUrls?.local[0];
process.stdout.write(`sessionkit viewer: ${url}\n`);
