/** Peak resident memory of this process. */
import { readFileSync } from "node:fs";

/**
 * The peak RSS of this process image in bytes: Linux's VmHWM. Not `resourceUsage().maxRSS`: on
 * Linux that includes the RSS the parent had when it forked this child.
 */
export function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}
