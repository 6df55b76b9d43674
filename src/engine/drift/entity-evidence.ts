/**
 * What the `enhanced` drift check adds to or takes from its cosine for the entities both texts
 * name or contradict: dates, identifiers of a shape the goal uses, and goal words missing from
 * the rank list. The cosine underrates them: "may" and a day number weigh little, and the
 * flattened word weights make a rare identifier barely heavier than a common domain word.
 * Figures: the header of `enhanced-similarity.ts`.
 */
import { mismatchedCodes } from './code-shapes.js'
import { dateMentions } from '../similarity/text-normalize.js'

/**
 * Subtracted per code of the action that the goal lacks but whose shape it uses, and per date
 * of the action that a goal naming dates lacks (at most 3 of each).
 */
export const CODE_MISMATCH_PENALTY = 0.02
const MAX_MISMATCHES = 3
/** Added when the action names a date the goal names (once, however many). */
export const DATE_MATCH_BONUS = 0.1
/**
 * Added when the action names a word of the goal that the rank list lacks (once, however many):
 * an identifier, a number, a code, a rare name. Both texts naming one is strong evidence.
 */
export const UNLISTED_MATCH_BONUS = 0.03

/** The entities a goal names, as `goalBag` collects them. */
export interface GoalEntities {
  /** Codes the goal names (lowercased) → shape, and the set of those shapes (`code-shapes.ts`). */
  readonly codes: ReadonlyMap<string, string>
  readonly shapes: ReadonlySet<string>
  /** Calendar dates the goal names, as "may 20" (`dateMentions`). */
  readonly dates: ReadonlySet<string>
}

const actionDates = new Set<string>()

/**
 * The sum of the bonuses and penalties for an action: `text` as given (codes keep their case),
 * `norm` normalized (`normalizeText`), `sharesUnlisted` whether it names an unlisted goal word.
 */
export function entityAdjustment(goal: GoalEntities, text: string, norm: string, sharesUnlisted: boolean): number {
  let delta = sharesUnlisted ? UNLISTED_MATCH_BONUS : 0
  if (goal.dates.size > 0) {
    actionDates.clear()
    dateMentions(norm, actionDates)
    let named = false
    let missing = 0
    for (const date of actionDates) {
      if (goal.dates.has(date)) named = true
      else missing++
    }
    delta += (named ? DATE_MATCH_BONUS : 0) - CODE_MISMATCH_PENALTY * Math.min(MAX_MISMATCHES, missing)
  }
  if (goal.shapes.size > 0) {
    delta -= CODE_MISMATCH_PENALTY * Math.min(MAX_MISMATCHES, mismatchedCodes(text, goal.codes, goal.shapes))
  }
  return delta
}
