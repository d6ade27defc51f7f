/**
 * fast-check settings shared by the property suites: a fixed seed by default (the same cases in
 * every run; FAST_CHECK_SEED=<n> explores others), which fast-check prints with the shrunk
 * counterexample when a property fails, together with the path to replay it.
 */
import type { Parameters } from "fast-check";

export const SEED = process.env.FAST_CHECK_SEED === undefined ? 20261123 : Number(process.env.FAST_CHECK_SEED);

export function settings<T>(numRuns: number): Parameters<T> {
  return { seed: SEED, numRuns };
}
