import { memoryStorage } from "../../adapters/memory/index.js";
import { describePortConformance } from "../../src/testing/index.js";

describePortConformance("memory (in Chromium)", async () => ({ port: memoryStorage() }));
