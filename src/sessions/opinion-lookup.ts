/**
 * How a session with `config.second_opinion` asks the LLM: before a step the engine says is due,
 * outside any transaction (like the LLM verification), with the goal and the last steps, this one
 * included. The step that carries the answer takes a snapshot: a replay of the journal asks nothing.
 */
import { askOpinion, OPINION_STEPS, type OpinionOutcome } from '../engine/detection/second-opinion.js'
import type { LlmVerifyFn } from '../engine/session/llm-verify.js'
import type { SessionRepository, SessionRow } from './repository.js'
import type { SessionStore } from './store.js'

function usesOpinion(meta: Pick<SessionRow, 'config'>): boolean {
  return (JSON.parse(meta.config) as { second_opinion?: object }).second_opinion !== undefined
}

/** The opinion the next step comes with, or undefined when none is due; never throws for the provider. */
export async function prepareOpinion(
  store: SessionStore,
  repo: SessionRepository,
  llm: LlmVerifyFn | undefined,
  meta: Pick<SessionRow, 'id' | 'agent_id' | 'config'>,
  description: string,
  output: string,
): Promise<OpinionOutcome | undefined> {
  if (llm === undefined || !usesOpinion(meta)) return undefined
  const due = await store.read(meta.agent_id, meta.id, (s) => (s.opinionDue ? { goal: s.goal, next: s.stepsTaken + 1 } : null))
  if (due === null) return undefined
  const earlier = await repo.steps(meta.agent_id, meta.id, Math.max(0, due.next - OPINION_STEPS), OPINION_STEPS - 1)
  const steps = [...earlier.filter((s) => s.step_number < due.next), { step_number: due.next, description, output }]
  return await askOpinion(llm, due.goal, steps.slice(-OPINION_STEPS))
}
