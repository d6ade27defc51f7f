/**
 * Which of the rules' keywords a text holds, in one pass (Aho-Corasick, as gitleaks' prefilter):
 * a rule runs its regex only on a text holding one of its keywords. Keywords are ASCII and
 * matched case-insensitively (ASCII letters folded). One table lookup per character; a regex of
 * the 241 keywords as alternatives took about a third of a scan's detection time.
 */

/** Characters below this have transitions; any other resets to the root (no keyword holds one). */
const ALPHABET = 128;

export class KeywordAutomaton {
  readonly words: readonly string[];
  /** Next state: `delta[state * ALPHABET + char]` (a full DFA: failures already followed). */
  readonly #delta: Int32Array;
  /** The keywords (indices) that end at each state, its suffixes' included; null for none. */
  readonly #ends: (number[] | null)[];

  constructor(words: readonly string[]) {
    this.words = words;
    const next: Map<number, number>[] = [new Map()];
    const own: number[][] = [[]];
    words.forEach((word, index) => {
      let state = 0;
      for (let i = 0; i < word.length; i++) {
        const char = word.charCodeAt(i);
        if (char >= ALPHABET) throw new Error(`keyword ${JSON.stringify(word)} is not ASCII`);
        let to = next[state]!.get(char);
        if (to === undefined) {
          to = next.length;
          next.push(new Map());
          own.push([]);
          next[state]!.set(char, to);
        }
        state = to;
      }
      own[state]!.push(index);
    });
    const delta = new Int32Array(next.length * ALPHABET);
    const fail = new Int32Array(next.length);
    const ends: (number[] | null)[] = new Array(next.length).fill(null);
    // Breadth first, so a state's failure state is complete before the state.
    const queue: number[] = [];
    for (let char = 0; char < ALPHABET; char++) {
      const to = next[0]!.get(char);
      if (to !== undefined) {
        delta[char] = to;
        queue.push(to);
      }
    }
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      const inherited = ends[fail[state]!] ?? null;
      const mine = own[state]!;
      ends[state] = mine.length > 0 ? [...mine, ...(inherited ?? [])] : inherited;
      for (let char = 0; char < ALPHABET; char++) {
        const to = next[state]!.get(char);
        if (to === undefined) {
          delta[state * ALPHABET + char] = delta[fail[state]! * ALPHABET + char]!;
        } else {
          fail[to] = delta[fail[state]! * ALPHABET + char]!;
          delta[state * ALPHABET + char] = to;
          queue.push(to);
        }
      }
    }
    this.#delta = delta;
    this.#ends = ends;
  }

  /** Sets `present[i]` to 1 for each keyword `i` that `text` holds; returns how many distinct ones. */
  mark(text: string, present: Uint8Array): number {
    const delta = this.#delta;
    const ends = this.#ends;
    let state = 0;
    let found = 0;
    for (let i = 0; i < text.length; i++) {
      let char = text.charCodeAt(i);
      if (char >= ALPHABET) {
        state = 0;
        continue;
      }
      if (char >= 65 && char <= 90) char += 32;
      state = delta[state * ALPHABET + char]!;
      const ended = ends[state];
      if (ended) {
        for (const word of ended) {
          if (present[word] === 0) {
            present[word] = 1;
            found++;
          }
        }
      }
    }
    return found;
  }
}
