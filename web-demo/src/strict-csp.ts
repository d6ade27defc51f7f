/**
 * The viewer runs under a Content Security Policy without 'unsafe-eval'. zod (the core's schema
 * checks) compiles fast paths with `new Function` after probing whether it may; under the policy
 * the probe is refused and reported as a violation. jitless skips the probe and the compiling.
 * Imported first by both entries, before any schema runs.
 */
import { config } from "zod";

config({ jitless: true });
