/**
 * GoalTracker: verifies each agent step against the original goal and the plan,
 * keeps drift, progress, loop and stall state, and recommends continue / adjust / replan / abort.
 */
import { isoAt, wallClock, type Clock } from '../clock.js'
import { cutText } from '../similarity/text.js'
import { askLlm, buildVerifyPrompt, describeFallback, type LlmVerifyFn } from './llm-verify.js'
import { isAligned, keywordAlignment, LOOP_THRESHOLD, recommendAction, stateHash, stemSet, updateDrift } from '../drift/step-alignment.js'
import { PlanTerms } from './plan-terms.js'
import { StateCounts } from './state-counts.js'
import type { Evidence } from '../drift/step-evidence.js'
import { copyRecord, type GoalState, type GoalTrackerJSON, type GoalTrackerOptions, type GoalTrackerSummary, type StepVerification, type VerificationRecord } from './goal-state.js'

export type { GoalState, GoalTrackerJSON, GoalTrackerOptions, GoalTrackerSummary, StepVerification, VerificationRecord }

/** Heuristic alignment at or above this is trusted without asking an LLM. */
export const LLM_VERIFY_BELOW = 0.7
export const LLM_WEIGHT = 0.7
export const DEFAULT_LLM_TIMEOUT_MS = 5000
export const HISTORY_MAX = 200
/** Distinct step states remembered for loop detection (first seen, first forgotten): a state not
 * repeated within 200 other states is not a tight loop, and the snapshot stays small. */
export const STATE_HASHES_MAX = 200

/** Per-step loop inputs from a caller that detects more than `repeat`, the state hash seen 3 times (GoalSession). */
export interface StepLoopOptions {
  /** This step's state hash, when the caller computed it (e.g. with its tool call in it). */
  stateHash?: string
  /** Sightings of one state that make a `repeat` (default LOOP_THRESHOLD); null: none (the state still counts for progress). */
  repeatThreshold?: number | null
  /** A loop of another kind this step completed, found by the caller: flags the loop like a repeat. */
  loop?: { note: string } | null
  /** The step completed an item of the agent's own todo list (`followTodos`): progress, whatever its alignment. */
  progressed?: boolean
  /**
   * The step read for evidence by the caller (step-evidence.ts), instead of the keyword
   * heuristic: its score is the alignment, and it decides progress, plan advance and neutrality.
   */
  evidence?: Evidence
}

interface Heuristic {
  score: number
  reasoning: string
}

export class GoalTracker {
  readonly originalGoal: string
  private readonly clock: Clock
  private readonly llmTimeoutMs: number
  private readonly keepHistory: boolean
  private readonly goalStems: Set<string>
  private plan: string[] = []
  private planStems = new PlanTerms<Set<string>>([], stemSet)
  /** The plan is the agent's todo list (`followTodos`): only the list moves it, not aligned steps. */
  private todoPlan = false
  private currentStep = 0
  private progress = 0
  private drift = 0
  private loopDetected = false
  private loopCount = 0
  private stallTurns = 0
  private states = new StateCounts(STATE_HASHES_MAX)
  private verifications = 0
  private alignmentSum = 0
  private stepsCompleted = 0
  private startedAt: number
  /** `started_at` as stored, formatted once rather than on every snapshot. */
  private startedAtIso: string | undefined
  private history: VerificationRecord[] = []
  /** Sightings of the last step's state when that step was a `repeat`, else 0. */
  private repeatCount = 0

  constructor(goal: string, options: GoalTrackerOptions = {}) {
    this.originalGoal = goal
    this.clock = options.clock ?? wallClock
    this.llmTimeoutMs = options.llmTimeoutMs ?? DEFAULT_LLM_TIMEOUT_MS
    this.keepHistory = options.keepHistory ?? true
    this.goalStems = stemSet(goal)
    this.startedAt = this.clock()
  }

  /** Sets the plan and puts the step counter (and plan progress) back to 0. */
  setPlan(steps: readonly string[]): void {
    this.plan = [...steps]
    this.planStems = new PlanTerms(this.plan, stemSet)
    this.currentStep = 0
    this.progress = 0
    this.todoPlan = false
  }

  /**
   * The agent's own todo list becomes the plan: its items, completed ones first, `done` of them
   * completed. From then on only the list moves progress. Returns true when more items are
   * completed than the plan counted before (progress the agent reported).
   */
  followTodos(items: readonly string[], done: number): boolean {
    const before = this.todoPlan ? this.currentStep : 0
    this.plan = [...items]
    this.planStems = new PlanTerms(this.plan, stemSet)
    this.currentStep = done
    this.progress = items.length === 0 ? 0 : done / items.length
    this.todoPlan = true
    if (done > before) this.stepsCompleted += done - before
    return done > before
  }

  getPlan(): string[] {
    return [...this.plan]
  }

  get isLooping(): boolean {
    return this.loopDetected
  }

  get stallTurnCount(): number {
    return this.stallTurns
  }

  /** When the last verified step was a `repeat`: how often its state has been seen; else 0. */
  get lastRepeatCount(): number {
    return this.repeatCount
  }

  getState(): GoalState {
    return {
      original_goal: this.originalGoal,
      current_step: this.currentStep,
      total_steps_planned: this.plan.length,
      progress: this.progress,
      drift_score: this.drift,
      loop_detected: this.loopDetected,
      loop_count: this.loopCount,
      stall_turns: this.stallTurns,
      timestamp: isoAt(this.clock()),
    }
  }

  /**
   * Verifies a step: heuristic alignment, and when it is below 0.7 and `llmVerify` is given,
   * 0.7 × LLM score + 0.3 × heuristic. A timeout, error or unparsable answer keeps the heuristic.
   */
  async verifyStep(description: string, output = '', llmVerify?: LlmVerifyFn, loop: StepLoopOptions = {}): Promise<StepVerification> {
    const h = this.heuristic(description, output, loop.evidence)
    if (llmVerify === undefined || h.score >= LLM_VERIFY_BELOW) return this.commit(description, output, h.score, h.reasoning, loop)
    const prompt = buildVerifyPrompt({
      goal: this.originalGoal,
      plan_step: this.plan[this.currentStep] ?? null,
      description,
      output,
    })
    const outcome = await askLlm(llmVerify, prompt, this.llmTimeoutMs)
    if (outcome.kind === 'score') {
      const blended = LLM_WEIGHT * outcome.score + (1 - LLM_WEIGHT) * h.score
      const why = `${h.reasoning}; LLM score ${fmt(outcome.score)}, blended 0.7 × LLM + 0.3 × heuristic = ${fmt(blended)}`
      return this.commit(description, output, blended, why, loop)
    }
    return this.commit(description, output, h.score, `${h.reasoning}; ${describeFallback(outcome, this.llmTimeoutMs)}`, loop)
  }

  /** The heuristic-only verification, synchronous; equal to `verifyStep` without an LLM. */
  verifyStepSync(description: string, output = '', loop: StepLoopOptions = {}): StepVerification {
    const h = this.heuristic(description, output, loop.evidence)
    return this.commit(description, output, h.score, h.reasoning, loop)
  }

  /** Forgets every step state and clears the loop flag (call after replanning). */
  resetLoopDetection(): void {
    this.states.clear()
    this.loopDetected = false
  }

  getHistory(): VerificationRecord[] {
    return this.history.slice(-HISTORY_MAX).map(copyRecord)
  }

  getSummary(): GoalTrackerSummary {
    return {
      goal: this.originalGoal,
      progress: this.progress,
      drift: this.drift,
      steps_completed: this.stepsCompleted,
      steps_planned: this.plan.length,
      loops_detected: this.loopCount,
      stall_turns: this.stallTurns,
      elapsed_seconds: Math.max(0, (this.clock() - this.startedAt) / 1000),
      verifications: this.verifications,
      // Over every verified step, not only the retained history.
      avg_alignment: this.verifications === 0 ? 0 : this.alignmentSum / this.verifications,
    }
  }

  /** The current plan step's index and the next's: the plan steps a step is read against. */
  get focus(): number[] {
    return [this.currentStep, this.currentStep + 1]
  }

  private heuristic(description: string, output: string, evidence?: Evidence): Heuristic {
    if (evidence !== undefined) return { score: evidence.score, reasoning: `Evidence ${fmt(evidence.score)}: ${evidence.reasoning}` }
    // The plan steps in focus: the current one and the next (agents often move on early).
    const focus = this.planStems.slice(this.currentStep, this.currentStep + 2)
    const a = keywordAlignment(this.goalStems, focus, stemSet(`${description}\n${output}`))
    if (a.no_signal) return { score: a.score, reasoning: `No content words to compare: neutral alignment ${fmt(a.score)}` }
    const goalPart = a.goal_matches.length > 0 ? `goal terms [${a.goal_matches.join(', ')}]` : 'no goal terms'
    const planPart = a.plan_matches.length > 0 ? `, plan terms [${a.plan_matches.join(', ')}]` : ''
    return { score: a.score, reasoning: `Keyword alignment ${fmt(a.score)}: ${goalPart}${planPart}` }
  }

  /** Applies one verified step to the state; the only place that mutates it. */
  private commit(description: string, output: string, alignment: number, reasoning: string, loop: StepLoopOptions): StepVerification {
    const hash = loop.stateHash ?? stateHash(description, output)
    const seen = this.states.see(hash)
    const notes: string[] = []
    const threshold = loop.repeatThreshold === undefined ? LOOP_THRESHOLD : loop.repeatThreshold
    this.repeatCount = threshold !== null && seen >= threshold ? seen : 0
    if (this.repeatCount > 0) {
      this.loopDetected = true
      this.loopCount++
      notes.push(`loop: the same step state seen ${seen} times`)
    } else if (loop.loop) {
      this.loopDetected = true
      this.loopCount++
      notes.push(loop.loop.note)
    }
    const aligned = isAligned(alignment)
    const ev = loop.evidence
    // A repeat of an already seen state is not new work: it never advances the plan. Read for
    // evidence, only real evidence is progress, and only evidence for the plan step advances it.
    // A completed todo item is progress; a todo plan moves only when the list does (followTodos).
    const advances = loop.progressed === true || ((ev === undefined ? aligned : ev.progress && aligned) && seen === 1)
    const advancesPlan = advances && !this.todoPlan && loop.progressed !== true && (ev === undefined || ev.plan)
    const before = { drift: this.drift, progress: this.progress }
    this.drift = updateDrift(this.drift, alignment)
    if (advances) {
      if (advancesPlan && this.currentStep < this.plan.length) {
        this.progress = Math.min(1, this.progress + 1 / this.plan.length)
        this.currentStep++
        this.stepsCompleted++
      }
      this.stallTurns = 0
    } else if (ev?.neutral !== true) {
      // Housekeeping and test runs say nothing either way: on them the stall counter stays.
      this.stallTurns++
      if (aligned) notes.push('repeated step: no progress')
    }
    const action = recommendAction({
      loop_detected: this.loopDetected,
      drift: this.drift,
      stall_turns: this.stallTurns,
      alignment,
    })
    const result: StepVerification = {
      aligned,
      alignment_score: alignment,
      drift_delta: this.drift - before.drift,
      progress_delta: this.progress - before.progress,
      reasoning: [reasoning, ...notes].join('; '),
      recommended_action: action,
    }
    this.verifications++
    this.alignmentSum += alignment
    if (this.keepHistory) {
      this.history.push({
        ...result,
        description: cutText(description, 200),
        drift_score: this.drift,
        progress: this.progress,
        timestamp: isoAt(this.clock()),
      })
      // Trimmed in chunks (amortized O(1) per step); readers see only the newest HISTORY_MAX.
      if (this.history.length >= 2 * HISTORY_MAX) this.history.splice(0, this.history.length - HISTORY_MAX)
    }
    return result
  }

  toJSON(): GoalTrackerJSON {
    return {
      goal: this.originalGoal,
      plan: [...this.plan],
      current_step: this.currentStep,
      progress: this.progress,
      drift_score: this.drift,
      loop_detected: this.loopDetected,
      loop_count: this.loopCount,
      stall_turns: this.stallTurns,
      state_hashes: this.states.toJSON(),
      verifications: this.verifications,
      alignment_sum: this.alignmentSum,
      steps_completed: this.stepsCompleted,
      started_at: (this.startedAtIso ??= isoAt(this.startedAt)),
      history: this.getHistory(),
      ...(this.todoPlan ? { todo_plan: true } : {}),
    }
  }

  static fromJSON(json: GoalTrackerJSON, options: GoalTrackerOptions = {}): GoalTracker {
    const t = new GoalTracker(json.goal, options)
    t.setPlan(json.plan)
    t.currentStep = json.current_step
    t.progress = json.progress
    t.drift = json.drift_score
    t.loopDetected = json.loop_detected
    t.loopCount = json.loop_count
    t.stallTurns = json.stall_turns
    t.states = StateCounts.fromJSON(json.state_hashes, STATE_HASHES_MAX)
    t.verifications = json.verifications
    t.alignmentSum = json.alignment_sum
    t.stepsCompleted = json.steps_completed
    t.startedAt = Date.parse(json.started_at)
    t.startedAtIso = undefined
    t.history = json.history.slice(-HISTORY_MAX).map(copyRecord)
    t.todoPlan = json.todo_plan === true
    return t
  }
}

function fmt(x: number): string {
  return x.toFixed(2)
}
