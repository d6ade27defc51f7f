/** What a soak reports: kills made, entries flush() acknowledged before them, those missing after, and anything else found wrong. */
export interface SoakResult {
  kills: number;
  acknowledged: number;
  lost: number;
  problems: string[];
  /** What else the soak did or saw that a reader of its figures should know. */
  notes: string[];
}
