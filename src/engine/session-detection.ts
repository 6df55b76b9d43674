/**
 * A goal session's detection beyond GoalTracker's own (a loop flag, drift, stall), wired around its GoalTracker: loop kinds (loops.ts),
 * graduated escalation (escalation.ts), spend and budget (budget.ts) and reminders that don't nag
 * (unchanged.ts). GoalSession asks it for the tracker's loop options before a step and hands it
 * the tracker's verdict after; with a session stored without these fields every answer is GoalTracker's.
 */
import { SpendTracker, type SpendJSON, type SpendReport } from './budget.js'
import { detectionSettings, type DetectionConfig, type DetectionSettings } from './detection-config.js'
import { EscalationLadder, type LadderJSON } from './escalation.js'
import type { GoalState, StepLoopOptions, StepVerification } from './goal-tracker.js'
import { LoopDetector, stepStateHash, toolCallText, type LoopDetectorJSON, type LoopFinding, type StepSignals, type StepTool } from './loops.js'
import type { RecommendedAction } from './step-alignment.js'
import { truncateChars } from './text.js'
import { UnchangedFilter, type InjectedKind, type UnchangedJSON, type UnchangedSkip } from './unchanged.js'

export interface DetectionJSON {
  loops: LoopDetectorJSON
  ladder: LadderJSON
  spend: SpendJSON
  unchanged: UnchangedJSON
  /** The last step's recommended action (absent before the first step, and in older snapshots). */
  last_action?: RecommendedAction
}

/** The verdict's additions: present only when there is something to say. */
export interface DetectionVerdict {
  /** The loop this step completed or continued. */
  loop?: LoopFinding
  /** Spend so far; on sessions with a budget or steps that report tokens / cost_usd. */
  spend?: SpendReport
}

export interface BudgetExceeded {
  step_number: number
  tokens: number
  cost_usd: number
  budget_fraction: number
  reason: string
}

interface Pending {
  step: number
  other: LoopFinding | null
  signals: StepSignals
}

export class SessionDetection {
  readonly settings: DetectionSettings
  private loops = new LoopDetector()
  private ladder = new EscalationLadder()
  private spend = new SpendTracker()
  private unchanged = new UnchangedFilter()
  private pending: Pending | null = null
  private lastAction: RecommendedAction | undefined

  constructor(config: DetectionConfig) {
    this.settings = detectionSettings(config)
  }

  /** Records the step in the loop window; the tracker options that make its loop verdict. */
  beforeStep(step: number, description: string, output: string, signals: StepSignals): StepLoopOptions {
    const s = this.settings.loops
    const exempt = LoopDetector.exempt(s, signals)
    const other = this.loops.observe(step, description, output, signals, s)
    this.pending = { step, other, signals }
    return {
      state_hash: exempt ? stepStateHash(description, output, signals.tool) : this.loops.lastState!,
      repeat_threshold: exempt || !s.kinds.has('repeat') ? null : s.thresholds.repeat,
      loop: other === null ? null : { note: `loop (${other.kind}): ${other.count} × "${other.subject}"` },
    }
  }

  /**
   * Adds the loop finding and spend to the tracker's verdict and decides its action: a spent
   * budget aborts; in graduated mode the ladder decides; otherwise the tracker's action (the immediate table) stands.
   */
  afterStep(
    verification: StepVerification,
    state: GoalState,
    repeatCount: number,
  ): { verification: StepVerification & DetectionVerdict; exceeded: BudgetExceeded | null; loop: LoopFinding | null } {
    const p = this.pending!
    this.pending = null
    // A kind found here says more than the tracker's state count (error_repeat rather than repeat).
    const loop = p.other ?? (repeatCount > 0 ? this.loops.repeatFinding(repeatCount) : null)
    const spent = this.spend.observe(p.signals.tokens, p.signals.cost_usd, state.stall_turns, this.settings.budget)
    const out: StepVerification & DetectionVerdict = { ...verification }
    if (loop !== null) out.loop = loop
    if (this.settings.budget !== undefined || this.spend.any) out.spend = spent.report
    const notes: string[] = []
    if (spent.over_budget) {
      out.recommended_action = 'abort'
      notes.push(spent.reason!)
    } else if (this.settings.graduated) {
      const v = this.ladder.decide({
        step_number: p.step,
        loop,
        drift: state.drift_score,
        stall_turns: state.stall_turns,
        alignment: verification.alignment_score,
        // Read for evidence, only the plan moving ends a loop: work between two runs of a loop is part of it.
        advanced: this.settings.evidence ? verification.progress_delta > 0 : verification.aligned && state.stall_turns === 0,
        runaway: spent.report.runaway,
        drift_abort: this.settings.drift_abort,
      })
      out.recommended_action = v.action
      if (v.note !== undefined) notes.push(v.note)
      if (loop !== null && v.action === 'adjust') notes.push(loop.advice)
    }
    if (spent.report.runaway) notes.push('runaway: the last steps spent at least twice the average rate without progress')
    if (notes.length > 0) out.reasoning = [out.reasoning, ...notes].join('; ')
    this.lastAction = out.recommended_action
    const exceeded = spent.newly_exceeded
      ? { step_number: p.step, tokens: spent.report.tokens, cost_usd: spent.report.cost_usd, budget_fraction: spent.report.budget_fraction!, reason: spent.reason! }
      : null
    return { verification: out, exceeded, loop }
  }

  resetLoop(): void {
    this.loops.reset()
    this.ladder.clearLoop()
    if (this.lastAction === 'abort' && !this.spend.spent) this.lastAction = undefined
  }

  /**
   * Why the agent should not make this tool call now, or null (a coding agent's PreToolUse hook
   * denies it with this reason): the budget is spent; the last verdict was `abort`; the call
   * continues a loop already told to `replan`; or, under graduated escalation, it would be the
   * call that completes a `same_call` loop. Drift never denies a call: it only advises.
   */
  gate(tool: StepTool): string | null {
    const call = `"${truncateChars(toolCallText(tool), 120)}"`
    if (this.spend.spent) return `goalkeeper: the session's budget is spent, so ${call} is not run. Stop here and report what is done and what is left.`
    if (this.lastAction === 'abort') {
      return `goalkeeper: the last step was answered "abort", so ${call} is not run. Stop and report to the user what went wrong and what you tried; do not continue on your own.`
    }
    const s = this.settings.loops
    if (LoopDetector.exempt(s, { tool })) return null
    const loop = this.ladder.replannedLoop
    if (loop !== null && this.loops.calledIn(tool, loop[0], loop[1])) {
      return `goalkeeper: ${call} repeats a loop you were already told to replan (steps ${loop[0]}–${loop[1]}), so it is not run. Change approach: use what the earlier calls returned, or try something different.`
    }
    const n = s.thresholds.same_call
    if (this.settings.graduated && s.kinds.has('same_call') && this.loops.sameCallsBefore(tool) >= n - 1) {
      return `goalkeeper: ${call} would make ${n} identical calls in a row, so it is not run: its answer will not change. Use what it returned, or call something else.`
    }
    return null
  }

  /** The last step was answered `abort` (and no loop reset or user prompt cleared it since). */
  get aborted(): boolean {
    return this.lastAction === 'abort'
  }

  /** The user spoke: an `abort` of a loop or drift is theirs to overrule (a spent budget stays spent). */
  newTurn(): void {
    if (this.lastAction === 'abort' && !this.spend.spent) {
      this.lastAction = undefined
      this.ladder.clearLoop()
    }
  }

  /** Why an injection of `text` at `turn` is skipped (skip_unchanged), or null. */
  skip(kind: InjectedKind, text: string, turn: number): UnchangedSkip | null {
    if (!this.settings.skip_unchanged) return null
    return this.unchanged.check(kind, text, turn, this.settings.resend_unchanged_after)
  }

  recordInjected(kind: InjectedKind, text: string, turn: number): void {
    if (this.settings.skip_unchanged) this.unchanged.record(kind, text, turn)
  }

  toJSON(): DetectionJSON {
    return {
      loops: this.loops.toJSON(),
      ladder: this.ladder.toJSON(),
      spend: this.spend.toJSON(),
      unchanged: this.unchanged.toJSON(),
      ...(this.lastAction === undefined ? {} : { last_action: this.lastAction }),
    }
  }

  static fromJSON(config: DetectionConfig, json: DetectionJSON | undefined): SessionDetection {
    const d = new SessionDetection(config)
    d.loops = LoopDetector.fromJSON(json?.loops)
    d.ladder = EscalationLadder.fromJSON(json?.ladder)
    d.spend = SpendTracker.fromJSON(json?.spend)
    d.unchanged = UnchangedFilter.fromJSON(json?.unchanged)
    d.lastAction = json?.last_action
    return d
  }
}
