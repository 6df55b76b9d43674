/**
 * What a coding agent's model reads after a tool call whose verdict is not `continue`: one short
 * paragraph saying what goalkeeper saw (the loop and its advice, the drift with the goal restated,
 * the stall, the spend) and what to do. A `continue` says nothing (no tokens spent), unless the
 * step crossed a budget warning: that is context, never a deny; nor does an `adjust` for one step
 * that scored low and nothing else (a single off-goal-looking call is no finding, and a model told
 * so after every such call learns to ignore the hook).
 */
import type { StepResult } from '../engine/session/goal-session.js'
import { DRIFT_WARNING, PROGRESS_STALL_TURNS } from '../engine/drift/step-alignment.js'
import { truncateChars } from '../engine/similarity/text.js'
import { unknownToolAdvice } from '../engine/detection/unknown-tools.js'
import { pct } from '../engine/detection/spend-budget.js'

const TODO: Record<'adjust' | 'replan' | 'abort', string> = {
  adjust: 'Make sure your next step serves the goal.',
  replan: 'Before your next tool call, stop and replan: say what is done, what failed and what you will try next, and update your todo list.',
  abort: 'Stop here: tell the user what you did, what went wrong and what you tried, and ask how to proceed.',
}

/** A budget warning this step crossed (the session's, the agent's day), or null: context even on `continue`. */
function budgetWarning(v: StepResult['verification']): string | null {
  const parts: string[] = []
  const session = v.spend?.crossed?.at(-1)
  if (session !== undefined && (v.spend?.budget_fraction ?? 0) < 1) parts.push(`${pct(session)} of the session's budget is spent.`)
  const day = v.agent_budget
  if (day?.crossed !== undefined && day.budget_fraction < 1) parts.push(`${pct(day.crossed.at(-1)!)} of today's budget (all your sessions) is spent.`)
  return parts.length === 0 ? null : `${parts.join(' ')} Put what matters most first and leave out what can wait.`
}

export function adviceFor(r: StepResult): string | null {
  const v = r.verification
  const action = v.recommended_action
  const warning = budgetWarning(v)
  if (action === 'continue') return warning === null ? null : `goalkeeper (step ${r.step_number}): ${warning}`
  const seen: string[] = []
  if (v.loop !== undefined) seen.push(v.loop.advice)
  if (v.unknown_tool !== undefined) seen.push(unknownToolAdvice(v.unknown_tool))
  if (v.busy_stall !== undefined) seen.push(v.busy_stall.advice)
  if (v.budget_stall !== undefined) seen.push(v.budget_stall.advice)
  if (v.second_opinion?.confirmed === true) seen.push(`A review of your last steps finds no progress${v.second_opinion.analysis === '' ? '.' : `: ${v.second_opinion.analysis}`}`)
  if (r.drift.drifting || r.state.drift_score >= DRIFT_WARNING) {
    seen.push(`Your recent steps look unrelated to the goal: "${truncateChars(r.state.original_goal.replace(/\s+/g, ' '), 300)}".`)
  }
  if (r.state.stall_turns >= PROGRESS_STALL_TURNS && v.busy_stall === undefined) seen.push(`No item of the plan has advanced in ${r.state.stall_turns} steps.`)
  if (v.spend?.budget_fraction !== undefined && v.spend.budget_fraction !== null && v.spend.budget_fraction >= 1) seen.push("The session's budget is spent.")
  else if (v.spend?.runaway === true) seen.push('The last steps spent tokens fast without progress.')
  if (v.agent_budget !== undefined && v.agent_budget.budget_fraction >= 1) seen.push("Today's budget for all your sessions is spent.")
  if (warning !== null) seen.push(warning)
  if (seen.length === 0) {
    if (action === 'adjust') return null
    seen.push(`This step scored low against the goal (${v.alignment_score.toFixed(2)}).`)
  }
  return `goalkeeper (step ${r.step_number}, ${action}): ${seen.join(' ')} ${TODO[action]}`
}
