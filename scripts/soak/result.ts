/** What a soak reports: kills made, entries flush() acknowledged before them, those missing after, and anything else found wrong. */
export interface SoakResult {
  kills: number;
  acknowledged: number;
  lost: number;
  problems: string[];
}
