/**
 * The consumers project's global setup: `npm pack` of the repository (its `prepare` builds the
 * library, the CLI and the viewer first), then one consumer project in a temp dir with the
 * tarball installed from the file, as a user's `npm i ./sessionkit-x.y.z.tgz` does. The tests
 * write their files into that project and run tools there: nothing of theirs resolves into the
 * repository's sources. `SESSIONKIT_TARBALL` names a tarball to use instead of packing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { createConsumer, packRepository } from "./consumer.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The packed sessionkit tarball. */
    tarball: string;
    /** A consumer project with the tarball, @types/node, vitest and esbuild installed. */
    consumer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const work = await mkdtemp(join(tmpdir(), "sessionkit-consumers-"));
  const tarball = process.env.SESSIONKIT_TARBALL ?? (await packRepository(work));
  const consumer = join(work, "consumer");
  await createConsumer(consumer, tarball);
  project.provide("tarball", tarball);
  project.provide("consumer", consumer);
  return () => rm(work, { recursive: true, force: true });
}
