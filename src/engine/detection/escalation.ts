/**
 * Graduated escalation (opt-in `config.escalation: "graduated"`), after OpenClaw's warn → block →
 * break: a loop first answers `adjust` with a sentence the model can act on, the same loop
 * continuing answers `replan`, and continuing after that `abort`. Sustained drift answers `replan`,
 * and `abort` only when the session asks for it (`drift_abort`) and it outlasts the replan by
 * DRIFT_GRACE_STEPS: a verdict's own reading of a step is not enough to stop an agent. `abort` is
 * kept for those and a spent budget; the immediate table's "abort when alignment < 0.3" becomes `adjust`.
 *
 * `immediate` (a session stored without the field) answers from recommendAction's table at once
 * (step-alignment.ts): a loop flag or critical drift replans, alignment below 0.3 aborts.
 */
import type { LoopFinding } from './loop-kinds.js'
import { DRIFT_CRITICAL, DRIFT_WARNING, PROGRESS_STALL_TURNS, type RecommendedAction } from '../drift/step-alignment.js'

export type EscalationMode = 'immediate' | 'graduated'
export const ESCALATION_MODES: readonly EscalationMode[] = ['immediate', 'graduated']
/** The former name of `immediate`, still accepted on input and in stored configs (deprecated). */
export const FORMER_IMMEDIATE = 'seed'
export type EscalationInput = EscalationMode | typeof FORMER_IMMEDIATE

export function escalationMode(value: EscalationInput): EscalationMode {
  return value === FORMER_IMMEDIATE ? 'immediate' : value
}

const RANK: Readonly<Record<RecommendedAction, number>> = { continue: 0, adjust: 1, replan: 2, abort: 3 }

/** The stronger of two actions (continue < adjust < replan < abort). */
export function atLeast(action: RecommendedAction, floor: RecommendedAction): RecommendedAction {
  return RANK[floor] > RANK[action] ? floor : action
}

/** Steps an agent gets to act on a drift `replan` before drift that stays critical answers `abort`. */
export const DRIFT_GRACE_STEPS = 3

export interface LadderJSON {
  /** First and last step of the loop being escalated; a finding whose steps overlap that span continues it. */
  loop_span: [number, number] | null
  loop_level: number
  /** Step number of the first `replan` for the drift episode in progress, or null. */
  drift_replan_at: number | null
}

export interface LadderInput {
  step: number
  loop: LoopFinding | null
  drift: number
  stallTurns: number
  alignment: number
  /** This step advanced the plan: a loop escalating before it ended (unless this step continues it). */
  advanced: boolean
  runaway: boolean
  /** Drift still critical DRIFT_GRACE_STEPS after its replan answers `abort` (config.drift_abort); otherwise `replan` again. */
  driftAbort: boolean
}

export interface LadderVerdict {
  action: RecommendedAction
  /** Why, when a rung of the ladder decided it. */
  note?: string
}

/**
 * A loop's answers as it goes on: its first finding, the one continuing it, and so on. The second
 * `replan` gives an agent that replanned one more finding's room before `abort`: on real coding
 * runs that went well, an agent's fix-and-rerun cycle sometimes reran alike a fourth time before it
 * got out (docs/detection.md).
 */
const RUNGS: readonly RecommendedAction[] = ['adjust', 'replan', 'replan', 'abort']

export class EscalationLadder {
  private loopSpan: [number, number] | null = null
  private loopLevel = 0
  private driftReplanAt: number | null = null

  /** The graduated table; the first matching row wins (a spent budget is decided before, by the caller). */
  decide(s: LadderInput): LadderVerdict {
    // Progress between two findings ends the loop; a looping step's own "progress" (a new output) does not.
    if (s.advanced && s.loop === null) this.clearLoop()
    if (s.loop !== null) {
      // Interleaved repeats (A B A B A: A's steps and B's) are one loop: spans overlap, steps need not.
      const from = s.loop.steps[0] ?? s.step
      const span = this.loopSpan
      const continues = this.loopLevel > 0 && span !== null && from <= span[1]
      this.loopLevel = continues ? Math.min(RUNGS.length, this.loopLevel + 1) : 1
      this.loopSpan = continues ? [Math.min(span[0], from), s.step] : [from, s.step]
      const action = RUNGS[this.loopLevel - 1]!
      const note = this.loopLevel === 1 ? 'loop: first detection, adjust' : action === 'replan' ? 'loop continues: replan' : 'loop continued after a replan: abort'
      return { action, note }
    }
    if (s.drift >= DRIFT_CRITICAL) {
      if (this.driftReplanAt === null) this.driftReplanAt = s.step
      if (s.driftAbort && s.step - this.driftReplanAt >= DRIFT_GRACE_STEPS) {
        return { action: 'abort', note: `drift still >= ${DRIFT_CRITICAL} ${s.step - this.driftReplanAt} steps after a replan: abort` }
      }
      return { action: 'replan' }
    }
    this.driftReplanAt = null
    if (s.stallTurns >= PROGRESS_STALL_TURNS) return { action: 'replan' }
    if (s.drift >= DRIFT_WARNING) return { action: 'adjust' }
    if (s.alignment < 0.5) return { action: 'adjust', ...(s.alignment < 0.3 ? { note: 'graduated: low alignment answers adjust, not abort' } : {}) }
    if (s.runaway) return { action: 'adjust', note: 'spending fast without progress: adjust' }
    return { action: 'continue' }
  }

  /** The loop being escalated once it got past its first `adjust`: its span of steps, else null. */
  get replannedLoop(): [number, number] | null {
    return this.loopLevel >= 2 ? this.loopSpan : null
  }

  clearLoop(): void {
    this.loopSpan = null
    this.loopLevel = 0
  }

  toJSON(): LadderJSON {
    return { loop_span: this.loopSpan === null ? null : [...this.loopSpan], loop_level: this.loopLevel, drift_replan_at: this.driftReplanAt }
  }

  static fromJSON(json: LadderJSON | undefined): EscalationLadder {
    const l = new EscalationLadder()
    if (json !== undefined) {
      l.loopSpan = json.loop_span === null ? null : [json.loop_span[0], json.loop_span[1]]
      l.loopLevel = json.loop_level
      l.driftReplanAt = json.drift_replan_at
    }
    return l
  }
}
