/**
 * The loop kinds a session can watch for, their thresholds, and what a finding says to the model.
 * The detector that finds them is loops.ts.
 */
import type { StepTool } from '../drift/code-entities.js'

export const LOOP_KINDS = ['repeat', 'error_repeat', 'alternation', 'monologue', 'same_call', 'same_result', 'error_cascade', 'same_edit'] as const
export type LoopKind = (typeof LOOP_KINDS)[number]

/**
 * repeat: 3 (GoalTracker's LOOP_THRESHOLD); error_repeat 3, monologue 3 and alternation over 6 from OpenHands;
 * same_call 5 from Gemini CLI; same_result 3; same_edit 3.
 */
export const DEFAULT_LOOP_THRESHOLDS: Readonly<Record<LoopKind, number>> = {
  repeat: 3,
  error_repeat: 3,
  alternation: 6,
  monologue: 3,
  same_call: 5,
  same_result: 3,
  error_cascade: 5,
  same_edit: 3,
}

/**
 * Kinds on unless a session lists its own: the ones that only look at the optional `tool` and
 * `error` fields, so a client that sends text alone gets the tracker's answers unchanged.
 */
export const DEFAULT_LOOP_KINDS: readonly LoopKind[] = ['repeat', 'error_repeat', 'same_call']

/** Least threshold per kind: fewer is not a repetition (an alternation needs two rounds of A/B). */
export const MIN_LOOP_THRESHOLD: Readonly<Record<LoopKind, number>> = {
  repeat: 2,
  error_repeat: 2,
  alternation: 4,
  monologue: 2,
  same_call: 2,
  same_result: 2,
  error_cascade: 3,
  same_edit: 2,
}
export const MAX_LOOP_THRESHOLD = 100

export function isLoopKind(x: unknown): x is LoopKind {
  return typeof x === 'string' && (LOOP_KINDS as readonly string[]).includes(x)
}

export type { StepTool } from '../drift/code-entities.js'

/** The optional fields a step may carry beside its description and output. */
export interface StepSignals {
  tool?: StepTool
  error?: boolean
  tokens?: number
  cost_usd?: number
}

export interface LoopSettings {
  kinds: ReadonlySet<LoopKind>
  thresholds: Readonly<Record<LoopKind, number>>
  exemptTools: ReadonlySet<string>
}

/** A loop this step completed or continued: its kind, the steps involved and what repeats. */
export interface LoopFinding {
  kind: LoopKind
  /** Step numbers involved, oldest first (for `repeat`, those still in the window). */
  steps: number[]
  count: number
  /** The repeating action, short (`name({args})` or the description's start). */
  subject: string
  /** One plain sentence the model can act on. */
  advice: string
}

function listSteps(steps: number[]): string {
  return steps.length <= 6 ? steps.join(', ') : `${steps.slice(0, 2).join(', ')} … ${steps.slice(-2).join(', ')}`
}

export function loopAdvice(kind: LoopKind, subject: string, count: number, steps: number[], other?: string): string {
  const at = `steps ${listSteps(steps)}`
  switch (kind) {
    case 'repeat':
      return `The same step with the same result has come back ${count} times (${at}): stop repeating "${subject}"; use what it returned or try another approach.`
    case 'error_repeat':
      return `"${subject}" failed ${count} times in a row (${at}): do not retry it as is; read the error and change the arguments or the approach.`
    case 'alternation':
      return `You are alternating between "${subject}" and "${other ?? '…'}" (${at}) without getting further: stop, decide what is missing, and take a different next step.`
    case 'monologue':
      return `You sent the same message ${count} times in a row with nothing happening between (${at}): act on it (call a tool) or ask something different.`
    case 'same_call':
      return `"${subject}" was called ${count} times in a row with the same arguments (${at}): its answer will not change; use it or call something else.`
    case 'error_cascade':
      return `The last ${count} tool calls all failed (${at}), the latest "${subject}": stop and read the errors; something they share (the environment, a path, a wrong assumption) needs fixing first.`
    case 'same_result':
      return `"${subject}" gave the same result ${count} times (${at}): what you changed between the runs did not change it; read the result and try something else.`
    case 'same_edit':
      return `The same edit "${subject}" was applied ${count} times in a row (${at}): each run changes the file again; look at the file as it is now and undo the duplicates before editing further.`
  }
}
