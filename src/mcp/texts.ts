import type { Static } from 'typebox'
import { PROGRESS_STALL_TURNS } from '../engine/drift/step-alignment.js'
import { unknownToolAdvice } from '../engine/detection/unknown-tools.js'
import type { Reminder, SearchResults, SnoozedReminder } from '../reminders/schemas.js'
import type { StepResult } from '../sessions/schemas.js'

/**
 * The short text an MCP tool result carries for the model, next to `structuredContent` (the REST
 * body). Many clients show the model only this text, so it names every id the model needs next.
 */

const fmt = (x: number) => x.toFixed(2)

const ADVICE: Record<Static<typeof StepResult>['verification']['recommended_action'], string> = {
  continue: 'carry on with the plan',
  adjust: 'steer the next step back toward the goal',
  replan: 'stop, re-read the goal and make a new plan before the next step',
  abort: 'drop this line of work and return to the goal',
}

/**
 * record_step: one plain sentence with the verdict and what to do next. A loop the step is part of
 * is named by kind with the engine's advice (what repeats, what to try instead), which is more use
 * to the model than the generic advice; so is a spent or runaway budget.
 */
export function verdictSentence(r: Static<typeof StepResult>): string {
  const { verification: v, drift: d, state: s } = r
  const alignment = `${v.aligned ? 'aligned with' : 'not aligned with'} the goal (alignment ${fmt(v.alignment_score)})`
  const drift = d.severity === 'none' ? 'no drift' : `${d.severity}${d.drifting ? ', sustained' : ''} drift (similarity ${fmt(d.similarity)})`
  const loop = v.loop ? `a ${v.loop.kind} loop` : s.loop_detected ? 'a loop detected (the same step repeated)' : ''
  const spend = v.spend
  const budget = spend?.budget_fraction != null && spend.budget_fraction >= 1 ? 'the budget spent' : spend?.runaway ? 'spending fast without plan progress' : ''
  const unknown = v.unknown_tool ? `a call to "${v.unknown_tool.name}", which is not one of its tools` : ''
  const busy = v.busy_stall ? `${v.busy_stall.count} tool calls in a row with nothing new` : ''
  const reading = v.budget_stall ? `${v.budget_stall.count} tool calls in a row that only read, past ${Math.floor(v.budget_stall.budget_fraction * 100)}% of the budget` : ''
  const doubt = v.second_opinion?.confirmed === true ? v.second_opinion : undefined
  const opinion = doubt ? 'a second opinion finding no progress' : ''
  const flags = [loop, unknown, busy, reading, opinion, s.stall_turns >= PROGRESS_STALL_TURNS ? `no plan progress for ${s.stall_turns} steps` : '', budget].filter(Boolean)
  const extra = flags.length > 0 ? `, ${flags.join(' and ')}` : ''
  const specific = v.loop?.advice ?? (v.unknown_tool ? unknownToolAdvice(v.unknown_tool) : (v.busy_stall?.advice ?? v.budget_stall?.advice ?? (doubt?.analysis || undefined)))
  const advice = specific !== undefined && v.recommended_action !== 'continue' ? lowerFirst(specific.replace(/\.$/, '')) : ADVICE[v.recommended_action]
  return `Step ${r.step_number} is ${alignment} with ${drift}${extra}; recommended action: ${v.recommended_action}, ${advice}.`
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1)

type ReminderBody = Static<typeof Reminder>

/** One line per reminder: what a model needs to act on it (its id) and to recognise it. */
export function reminderLine(r: ReminderBody): string {
  const when = r.next_fire_at ? `, next ${r.next_fire_at}` : r.trigger.type === 'context' ? `, on "${r.trigger.pattern}"` : ''
  return `${r.id} [${r.status}, ${r.priority}${when}] ${r.title}`
}

export function reminderListText(items: ReminderBody[], nextCursor: string | null, empty: string): string {
  if (items.length === 0) return empty
  const more = nextCursor ? `\nMore: pass cursor "${nextCursor}".` : ''
  return `${items.length} reminder${items.length === 1 ? '' : 's'}:\n${items.map(reminderLine).join('\n')}${more}`
}

export function searchText(r: Static<typeof SearchResults>, q: unknown): string {
  if (r.items.length === 0) return `No reminder matches "${String(q)}".`
  return `${r.items.length} match${r.items.length === 1 ? '' : 'es'}, best first:\n${r.items.map((x) => reminderLine(x.reminder)).join('\n')}`
}

export function snoozeText(r: Static<typeof SnoozedReminder>): string {
  return `Reminder ${r.id} snoozed until ${r.snooze_until ?? 'later'}${r.clamped ? ' (the duration was clamped to its priority bounds)' : ''}.`
}
