/**
 * What a session write hands back (its result and the rows to write with the engine state), and
 * the rows it becomes.
 */
import type { DriftEvent } from '../engine/drift/goal-dna.js'
import type { GoalSession, SessionEvent, StepResult } from '../engine/session/goal-session.js'
import { conflict, transientConflict } from '../errors.js'
import type { EventType } from '../webhooks/outbox.js'
import { signalColumns, type StepInput } from './model.js'
import type { DriftEventInsert, SessionKey, StateWrite, StepInsert } from './repository.js'

/** What a mutation hands back to be written with the engine state. */
export interface Outcome<T> {
  result: T
  events?: SessionEvent[]
  drift_events?: DriftEvent[]
  /** A step's input, recorded as its row of the step log (and journal entry). */
  step?: { input: StepInput; result: StepResult }
  /** Write a snapshot even for a step (one computed off the pinned clock, e.g. while an LLM answered). */
  snapshot?: boolean
  /**
   * Runs in the write's transaction before its rows are made (a step charging the agent's daily
   * budget); it may change `result` and add `agent_events`.
   */
  inTransaction?: () => Promise<void>
  /** Events of the agent rather than the session (`agent.budget_warning`), written with the rows. */
  agent_events?: [EventType, Record<string, unknown>][]
}

/** The version check failed: another writer committed first. */
export class LostRace extends Error {
  constructor() {
    super('The session changed while this request was computed; retry it.')
    this.name = 'LostRace'
  }
}

/** A lost race after the retries the caller allows: 409. */
export const raceConflict = () => transientConflict('The session was changed concurrently; retry the request.')

export function assertActive(key: SessionKey): void {
  if (key.status === 'archived') throw conflict(`Session ${key.id} is archived; unarchive it (PATCH status: active) to change it.`)
}

/**
 * The rows of a write computed from `key.version`: the engine state as the next version (with a
 * snapshot unless the write is journaled), the step's row and its drift events.
 */
export function rowsOf(
  key: Pick<SessionKey, 'id' | 'agent_id' | 'version'>,
  session: GoalSession,
  outcome: Outcome<unknown>,
  journaled: boolean,
  now: number,
): { state: StateWrite; step: StepInsert | undefined; drift: DriftEventInsert[] } {
  const { id, agent_id } = key
  const state = {
    id,
    agent_id,
    version: key.version,
    goal: session.goal,
    plan: JSON.stringify(session.plan),
    state: JSON.stringify(session.state()),
    snapshot: journaled ? undefined : JSON.stringify(session.toJSON()),
    updated_at: now,
  }
  const step = outcome.step && {
    session_id: id,
    step_number: outcome.step.result.step_number,
    agent_id,
    description: outcome.step.input.description,
    output: outcome.step.input.output ?? '',
    ...signalColumns(outcome.step.input),
    verification: JSON.stringify(outcome.step.result.verification),
    drift: JSON.stringify(outcome.step.result.drift),
    recommended_action: outcome.step.result.verification.recommended_action,
    created_at: now,
    version: key.version + 1,
  }
  const drift = (outcome.drift_events ?? []).map((e) => ({
    session_id: id,
    agent_id,
    step_number: e.step_number,
    similarity: e.similarity,
    action_text: e.action_text,
    severity: e.severity,
    created_at: Date.parse(e.timestamp),
  }))
  return { state, step, drift }
}
