/** How insights write their figures, the same in `sessionkit stats` and the viewer. */

/** Dollars as the session header writes them. */
export const formatDollars = (amount: number): string => `$${amount.toFixed(3)}`;

/** A tool's time: "850 ms", "4.2 s", "3m 05s", "2h 07m"; "" when unknown. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}
