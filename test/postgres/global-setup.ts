/**
 * The postgres project's global setup: one private cluster for the run (cluster.ts), its URL
 * provided to the tests as `pgUrl`. A missing server fails the run: these tests never skip.
 */
import type { TestProject } from "vitest/node";
import { startCluster } from "./cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startCluster();
  project.provide("pgUrl", cluster.url);
  return () => cluster.stop();
}
