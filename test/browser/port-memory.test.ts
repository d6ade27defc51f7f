import { memoryStorage } from "../../adapters/memory/index.js";
import { describePortConformance } from "../shared/port-conformance.js";

describePortConformance("memory (in Chromium)", async () => ({ port: memoryStorage() }));
