/**
 * A goal session's detection beyond GoalTracker's own (a loop flag, drift, stall), wired around
 * its GoalTracker: loop kinds (loops.ts), graduated escalation (escalation.ts), spend, budget and
 * its warnings (spend-budget.ts), calls to tools the session does not have (unknown-tools.ts), busy
 * stalls (busy-stall.ts), reading past half the budget (budget-stall.ts), the second opinion
 * (second-opinion.ts) and reminders that don't nag (unchanged.ts). GoalSession asks it for the tracker's loop options before a step and hands it
 * the tracker's verdict after; with a session stored without these fields every answer is GoalTracker's.
 */
import { SpendTracker, type SpendJSON, type SpendReport } from './spend-budget.js'
import { detectionSettings, type DetectionConfig, type DetectionSettings } from './detection-config.js'
import { atLeast, EscalationLadder, type LadderJSON } from './escalation.js'
import type { GoalState, StepLoopOptions, StepVerification } from '../session/goal-tracker.js'
import { callKind } from '../drift/code-entities.js'
import { LoopDetector, type LoopDetectorJSON } from './loops.js'
import type { LoopFinding, LoopKind, StepSignals, StepTool } from './loop-kinds.js'
import { stepStateHash, textKey, toolCallText } from './step-keys.js'
import type { RecommendedAction } from '../drift/step-alignment.js'
import { truncateChars } from '../similarity/text.js'
import { UnchangedFilter, type InjectedKind, type UnchangedJSON, type UnchangedSkip } from '../context/unchanged.js'
import { ToolList, unknownToolAdvice, type UnknownTool } from './unknown-tools.js'
import { BusyWatch, type BusyJSON, type BusyStall } from './busy-stall.js'
import { BudgetStallWatch, type BudgetStall, type BudgetStallJSON } from './budget-stall.js'
import { maskVolatile } from './output-mask.js'
import type { AgentBudgetReport } from './agent-spend.js'
import { OpinionSchedule, type OpinionOutcome, type SecondOpinionReport } from './second-opinion.js'

export interface DetectionJSON {
  loops: LoopDetectorJSON
  ladder: LadderJSON
  spend: SpendJSON
  unchanged: UnchangedJSON
  /** The last step's recommended action (absent before the first step, and in older snapshots). */
  last_action?: RecommendedAction
  /** The tool list the agent reported (absent: none reported, config.tools counts). */
  reported_tools?: string[]
  /** Calls in a row to tools the session does not have (absent: 0). */
  unknown_run?: number
  /** The busy-stall watch (absent in older snapshots and on sessions without busy_after). */
  busy?: BusyJSON
  /** The budget-stall watch (absent in older snapshots and on sessions without budget_stall). */
  budget_stall?: BudgetStallJSON
  /** The step number the next second opinion comes with (absent: config.second_opinion.after). */
  opinion_at?: number
}

/** The verdict's additions: present only when there is something to say. */
export interface DetectionVerdict {
  /** The loop this step completed or continued. */
  loop?: LoopFinding
  /** Spend so far; on sessions with a budget or steps that report tokens / cost_usd. */
  spend?: SpendReport
  /** The step called a tool the session does not have (config.tools or the reported list). */
  unknown_tool?: UnknownTool
  /** Busy but going nowhere: tool calls in a row that brought nothing new (config.busy_after). */
  busy_stall?: BusyStall
  /** Past a share of the budget, tool calls in a row that only read (config.budget_stall). */
  budget_stall?: BudgetStall
  /** The agent's daily budget, on steps that spend when the agent has one (added by the service, agent-spend.ts). */
  agent_budget?: AgentBudgetReport
  /** The LLM's second opinion, on a step it was asked for (config.second_opinion). */
  second_opinion?: SecondOpinionReport
}

export interface BudgetExceeded {
  step_number: number
  tokens: number
  cost_usd: number
  budget_fraction: number
  reason: string
}

/** A warning threshold of the session's budget crossed (one per threshold). */
export interface BudgetWarning {
  step_number: number
  threshold: number
  tokens: number
  cost_usd: number
  budget_fraction: number
}

interface Pending {
  step: number
  other: LoopFinding | null
  signals: StepSignals
  unknown: UnknownTool | null
  /** The call's masked answer key, for the busy watch ('' when the watch is off or the step is exempt). */
  resultKey: string
  /** The step calls a tool exempt from loop detection (config.loop_exempt_tools). */
  exempt: boolean
}

export class SessionDetection {
  readonly settings: DetectionSettings
  private loops = new LoopDetector()
  private ladder = new EscalationLadder()
  private spend = new SpendTracker()
  private unchanged = new UnchangedFilter()
  private pending: Pending | null = null
  private lastAction: RecommendedAction | undefined
  private reported: ToolList | null = null
  private unknownRun = 0
  private busy = new BusyWatch()
  private budgetStall = new BudgetStallWatch()
  private opinion: OpinionSchedule | null

  constructor(config: DetectionConfig) {
    this.settings = detectionSettings(config)
    this.opinion = config.second_opinion === undefined ? null : new OpinionSchedule(config.second_opinion)
  }

  /** Whether the next step (number `step`) comes with a second opinion. */
  opinionDue(step: number): boolean {
    return this.opinion?.due(step) === true
  }

  /** Records the step in the loop window; the tracker options that make its loop verdict. */
  beforeStep(step: number, description: string, output: string, signals: StepSignals): StepLoopOptions {
    const s = this.settings.loops
    const exempt = LoopDetector.exempt(s, signals)
    const other = this.loops.observe(step, description, output, signals, s)
    let resultKey = ''
    if (this.settings.busyAfter !== null && signals.tool !== undefined && !exempt) {
      const newest = this.loops.newest
      resultKey = newest?.step === step && newest.result !== '' ? newest.result : textKey(maskVolatile(output))
    }
    this.pending = { step, other, signals, unknown: this.unknownTool(signals.tool), resultKey, exempt }
    return {
      stateHash: exempt ? stepStateHash(description, output, signals.tool) : this.loops.lastState!,
      repeatThreshold: exempt || !s.kinds.has('repeat') ? null : s.thresholds.repeat,
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
    todoDone = false,
    opinion?: OpinionOutcome,
  ): {
    verification: StepVerification & DetectionVerdict
    exceeded: BudgetExceeded | null
    warnings: BudgetWarning[]
    loop: LoopFinding | null
    busy: BusyStall | null
  } {
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
        step: p.step,
        loop,
        drift: state.drift_score,
        stallTurns: state.stall_turns,
        alignment: verification.alignment_score,
        // Read for evidence, only the plan moving ends a loop: work between two runs of a loop is part of it.
        advanced: this.settings.evidence ? verification.progress_delta > 0 : verification.aligned && state.stall_turns === 0,
        runaway: spent.report.runaway,
        driftAbort: this.settings.driftAbort,
      })
      out.recommended_action = v.action
      if (v.note !== undefined) notes.push(v.note)
      if (loop !== null && v.action === 'adjust') notes.push(loop.advice)
    }
    const after = this.settings.busyAfter
    const busy = after === null || p.resultKey === '' ? null : this.busy.observe(p.step, p.signals.tool, p.resultKey, todoDone || verification.progress_delta > 0, after)
    if (busy !== null) {
      out.busy_stall = busy
      out.recommended_action = atLeast(out.recommended_action, 'replan')
      notes.push(busy.advice)
    }
    const watch = this.settings.budgetStall
    const stall =
      watch === null || p.signals.tool === undefined || p.exempt
        ? null
        : this.budgetStall.observe(p.step, p.signals.tool, todoDone || verification.progress_delta > 0, spent.report.budget_fraction, watch)
    if (stall !== null && !spent.over_budget) {
      out.budget_stall = stall
      out.recommended_action = atLeast(out.recommended_action, 'replan')
      notes.push(stall.advice)
    }
    if (p.unknown !== null) {
      out.unknown_tool = p.unknown
      out.recommended_action = atLeast(out.recommended_action, p.unknown.count > 1 ? 'replan' : 'adjust')
      notes.push(unknownToolAdvice(p.unknown))
    }
    if (opinion !== undefined && this.opinion !== null) this.opinion.apply(p.step, opinion, out)
    if (spent.warning !== null) notes.push(spent.warning)
    if (spent.report.runaway) notes.push('runaway: the last steps spent at least twice the average rate without progress')
    if (notes.length > 0) out.reasoning = [out.reasoning, ...notes].join('; ')
    this.lastAction = out.recommended_action
    const exceeded = spent.newly_exceeded
      ? { step_number: p.step, tokens: spent.report.tokens, cost_usd: spent.report.cost_usd, budget_fraction: spent.report.budget_fraction!, reason: spent.reason! }
      : null
    const { tokens, cost_usd, budget_fraction } = spent.report
    const warnings = (spent.report.crossed ?? []).map((threshold) => ({ step_number: p.step, threshold, tokens, cost_usd, budget_fraction: budget_fraction! }))
    return { verification: out, exceeded, warnings, loop, busy: busy !== null && busy.count === after ? busy : null }
  }

  /** The tools the session has: the list the agent reported, else config.tools; null when neither is known. */
  get tools(): ToolList | null {
    return this.reported ?? this.settings.tools
  }

  /** The agent reported the tools it has: from now on they are the session's. */
  reportTools(names: readonly string[]): void {
    this.reported = new ToolList([...new Set(names)])
  }

  /** A call to a tool the session does not have (counting the run of them), or null; a message step leaves the run as it is. */
  private unknownTool(tool: StepTool | undefined): UnknownTool | null {
    const tools = this.tools
    if (tool === undefined || tools === null) return null
    if (tools.has(tool.name)) {
      this.unknownRun = 0
      return null
    }
    this.unknownRun++
    return { name: tool.name, similar: tools.similar(tool.name), count: this.unknownRun }
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
   * call that completes a loop of a kind that is on with nothing done between: the Nth identical
   * call in a row answered alike (`same_result`), the Nth identical edit in a row (`same_edit`),
   * the Nth identical call in a row whatever came back (`same_call`). Drift never denies a call.
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
    if (!this.settings.graduated) return null
    const on = (k: LoopKind) => s.kinds.has(k)
    if (on('same_result') && this.loops.sameResultsBefore(tool) >= s.thresholds.same_result - 1) {
      const n = s.thresholds.same_result
      return `goalkeeper: ${call} would make ${n} identical calls in a row, and the last ${n - 1} were answered alike, so it is not run: nothing done between could change its answer. Use what it returned, or do something else first.`
    }
    const calls = on('same_edit') || on('same_call') ? this.loops.sameCallsBefore(tool) : 0
    if (on('same_edit') && calls >= s.thresholds.same_edit - 1 && callKind(tool) === 'change') {
      return `goalkeeper: ${call} would apply the same edit ${s.thresholds.same_edit} times in a row, so it is not run: each run changes the file again. Look at the file as it is now instead.`
    }
    if (on('same_call') && calls >= s.thresholds.same_call - 1) {
      return `goalkeeper: ${call} would make ${s.thresholds.same_call} identical calls in a row, so it is not run: its answer will not change. Use what it returned, or call something else.`
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
    if (!this.settings.skipUnchanged) return null
    return this.unchanged.check(kind, text, turn, this.settings.resendUnchangedAfter)
  }

  recordInjected(kind: InjectedKind, text: string, turn: number): void {
    if (this.settings.skipUnchanged) this.unchanged.record(kind, text, turn)
  }

  toJSON(): DetectionJSON {
    return {
      loops: this.loops.toJSON(),
      ladder: this.ladder.toJSON(),
      spend: this.spend.toJSON(),
      unchanged: this.unchanged.toJSON(),
      ...(this.lastAction === undefined ? {} : { last_action: this.lastAction }),
      ...(this.reported === null ? {} : { reported_tools: [...this.reported.names] }),
      ...(this.unknownRun === 0 ? {} : { unknown_run: this.unknownRun }),
      ...(this.settings.busyAfter === null ? {} : { busy: this.busy.toJSON() }),
      ...(this.settings.budgetStall === null ? {} : { budget_stall: this.budgetStall.toJSON() }),
      ...(this.opinion === null ? {} : { opinion_at: this.opinion.toJSON() }),
    }
  }

  static fromJSON(config: DetectionConfig, json: DetectionJSON | undefined): SessionDetection {
    const d = new SessionDetection(config)
    d.loops = LoopDetector.fromJSON(json?.loops)
    d.ladder = EscalationLadder.fromJSON(json?.ladder)
    d.spend = SpendTracker.fromJSON(json?.spend)
    d.unchanged = UnchangedFilter.fromJSON(json?.unchanged)
    d.lastAction = json?.last_action
    d.reported = json?.reported_tools === undefined ? null : new ToolList(json.reported_tools)
    d.unknownRun = json?.unknown_run ?? 0
    d.busy = BusyWatch.fromJSON(json?.busy)
    d.budgetStall = BudgetStallWatch.fromJSON(json?.budget_stall)
    if (config.second_opinion !== undefined) d.opinion = new OpinionSchedule(config.second_opinion, json?.opinion_at)
    return d
  }
}
