/**
 * What a coding agent's model reads after a tool call whose verdict is not `continue`: one short
 * paragraph saying what goalkeeper saw (the loop and its advice, the drift with the goal restated,
 * the stall, the spend) and what to do. A `continue` says nothing: no tokens spent; nor does an
 * `adjust` for one step that scored low and nothing else (a single off-goal-looking call is no
 * finding, and a model told so after every such call learns to ignore the hook).
 */
import type { StepResult } from '../engine/goal-session.js'
import { DRIFT_WARNING, PROGRESS_STALL_TURNS } from '../engine/step-alignment.js'
import { truncateChars } from '../engine/text.js'

const TODO: Record<'adjust' | 'replan' | 'abort', string> = {
  adjust: 'Make sure your next step serves the goal.',
  replan:
    'Before your next tool call, stop and replan: say what is done, what failed and what you will try next, and update your todo list.',
  abort: 'Stop here: tell the user what you did, what went wrong and what you tried, and ask how to proceed.',
}

export function adviceFor(r: StepResult): string | null {
  const v = r.verification
  const action = v.recommended_action
  if (action === 'continue') return null
  const seen: string[] = []
  if (v.loop !== undefined) seen.push(v.loop.advice)
  if (r.drift.drifting || r.state.drift_score >= DRIFT_WARNING) {
    seen.push(`Your recent steps look unrelated to the goal: "${truncateChars(r.state.original_goal.replace(/\s+/g, ' '), 300)}".`)
  }
  if (r.state.stall_turns >= PROGRESS_STALL_TURNS) seen.push(`No item of the plan has advanced in ${r.state.stall_turns} steps.`)
  if (v.spend?.budget_fraction !== undefined && v.spend.budget_fraction !== null && v.spend.budget_fraction >= 1) seen.push("The session's budget is spent.")
  else if (v.spend?.runaway === true) seen.push('The last steps spent tokens fast without progress.')
  if (seen.length === 0) {
    if (action === 'adjust') return null
    seen.push(`This step scored low against the goal (${v.alignment_score.toFixed(2)}).`)
  }
  return `goalkeeper (step ${r.step_number}, ${action}): ${seen.join(' ')} ${TODO[action]}`
}
