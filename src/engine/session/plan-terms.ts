/** Plan steps whose terms are kept at once: the two in focus and the two before them. */
const KEPT = 4

/**
 * A plan's per-step terms, computed when a step comes into focus instead of for every step up
 * front: a step is only ever compared with the current plan step and the next. Kept for all 500
 * steps of 2,000 characters, the term sets held ~20 MB of heap per session.
 */
export class PlanTerms<T> {
  private readonly steps: readonly string[]
  private readonly termsOf: (text: string) => T
  private readonly kept = new Map<number, T>()

  constructor(steps: readonly string[], termsOf: (text: string) => T) {
    this.steps = steps
    this.termsOf = termsOf
  }

  /** The terms of step `i`, undefined past the plan's end. */
  at(i: number): T | undefined {
    const step = this.steps[i]
    if (step === undefined) return undefined
    let terms = this.kept.get(i)
    if (terms === undefined) {
      terms = this.termsOf(step)
      if (this.kept.size >= KEPT) this.kept.delete(this.kept.keys().next().value!)
      this.kept.set(i, terms)
    }
    return terms
  }

  /** The terms of steps `from` to `to` (exclusive) that exist. */
  slice(from: number, to: number): T[] {
    const out: T[] = []
    for (let i = from; i < to; i++) {
      const terms = this.at(i)
      if (terms !== undefined) out.push(terms)
    }
    return out
  }
}
