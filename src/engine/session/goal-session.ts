/**
 * GoalSession: one goal session as a single aggregate, so the HTTP service loads one object, calls
 * one method and persists one snapshot: a step's verdict, goal and plan changes, reminders and
 * recitation. Its parts, how they are built or restored and its JSON are session-parts.ts. Its episode
 * events, recitation state, reminder input and summary are built in session-events.ts,
 * session-recitation.ts, session-reminder.ts and session-summary.ts; loop kinds, escalation, budget
 * and skip_unchanged in session-detection.ts.
 */
import { GoalDNA, type DriftCheck, type DriftTrend } from '../drift/goal-dna.js'
import { isAligned } from '../drift/step-alignment.js'
import { GoalReminderInjector, type GoalReminder } from '../context/goal-reminder.js'
import { GoalTracker, type GoalState, type StepVerification } from './goal-tracker.js'
import type { LlmVerifyFn } from './llm-verify.js'
import type { ChatMessage, RecitationState } from '../context/recitation.js'
import { driftEvents, pushStepEvents, type StepBefore } from './session-events.js'
import { mergeContext, planTasks, recitationPreview, recitationStateOf } from '../context/session-recitation.js'
import { sessionSummary } from './session-summary.js'
import { reminderInputOf } from '../context/session-reminder.js'
import type { StepSignals, StepTool } from '../detection/loop-kinds.js'
import type { StopCheck } from './agent-turn.js'
import type { OpinionOutcome } from '../detection/second-opinion.js'
import { StepReader, type Evidence } from '../drift/step-evidence.js'
import type { UnchangedSkip } from '../context/unchanged.js'
import { SessionParts } from './session-parts.js'
import type {
  GoalSessionJSON,
  GoalSessionOptions,
  RecitationContext,
  RecitationInjection,
  RecitationPreview,
  ReminderOverrides,
  SessionEvent,
  SessionSummary,
  StepResult,
  WithEvents,
} from './session-types.js'

export type * from './session-types.js'

export class GoalSession extends SessionParts {
  /**
   * Verifies a step with the heuristic only, checks it for drift and reports episode events.
   * `similarity`: the description's similarity to the goal computed outside (an `embeddings`
   * cosine), used by the drift check instead of the goal's own scorer.
   */
  step(description: string, output = '', similarity?: number, signals: StepSignals = {}, opinion?: OpinionOutcome): StepResult & { events: SessionEvent[] } {
    const before = this.before()
    const loop = this.beforeStep(description, output, signals)
    const { drift, ...read } = this.readStep(description, output, similarity, signals)
    return this.finishStep(description, before, this.tracker.verifyStepSync(description, output, { ...loop, ...read }), drift, loop.progressed === true, opinion)
  }

  /**
   * Whether the next step comes with a second opinion (config.second_opinion): the caller asks the
   * LLM first (askOpinion) and passes its outcome to `step`. `opinion`, in `step`: that outcome.
   */
  get opinionDue(): boolean {
    return this.detection.opinionDue(this.stepCount + 1)
  }

  /** Like `step`, asking `llmVerify` when the heuristic is unsure; a failing LLM falls back to it. */
  async stepAsync(
    description: string,
    output: string,
    llmVerify: LlmVerifyFn,
    similarity?: number,
    signals: StepSignals = {},
    opinion?: OpinionOutcome,
  ): Promise<StepResult & { events: SessionEvent[] }> {
    const before = this.before()
    const loop = this.beforeStep(description, output, signals)
    const { drift, ...read } = this.readStep(description, output, similarity, signals)
    return this.finishStep(description, before, await this.tracker.verifyStep(description, output, llmVerify, { ...loop, ...read }), drift, loop.progressed === true, opinion)
  }

  /**
   * The step's drift check and, with evidence alignment, its evidence, read with the text's graded
   * similarity. With `drift_evidence` (new sessions) the evidence then decides the drift check
   * where it knows better than the text: what the step touches or runs (`concrete`), and under
   * `lexical`, whose threshold flags most on-goal text, words that make the step aligned. A step it
   * finds on the goal is no drift; a neutral one (a shell command naming nothing of the goal)
   * neither drift nor its end (docs/detection.md).
   */
  private readStep(description: string, output: string, similarity: number | undefined, signals: StepSignals): { drift: WithEvents<DriftCheck>; evidence?: Evidence } {
    const step = this.stepCount + 1
    if (this.reader === null) return { drift: this.driftCheck(description, step, similarity) }
    const graded = this.dna.grade(description, similarity)
    const evidence = this.reader.read(description, output, signals, this.tracker.focus, graded)
    const decides = this.detection.settings.driftEvidence && (evidence.concrete || (graded.mode === 'lexical' && !evidence.neutral))
    const stance = !decides ? undefined : evidence.neutral ? 'neutral' : isAligned(evidence.score) ? 'on' : undefined
    return { drift: this.recordDrift(step, description, () => this.dna.checkGraded(step, description, graded, stance)), evidence }
  }

  /** The step's loop options; a call writing the agent's todo list makes that list the plan (todo-tools.ts). */
  private beforeStep(description: string, output: string, signals: StepSignals) {
    const loop = this.detection.beforeStep(this.stepCount + 1, description, output, signals)
    const todos = signals.tool === undefined ? null : this.todos.apply(signals.tool)
    if (todos === null) return loop
    this.context = mergeContext(this.context, { plan_tasks: todos.map((t) => ({ description: t.content, status: t.status })) })
    const items = todos.map((t) => t.content)
    this.reader?.setPlan(items)
    return { ...loop, progressed: this.tracker.followTodos(items, todos.filter((t) => t.status === 'completed').length) }
  }

  /** What `finishStep` compares against: two fields, without building (and timestamping) a GoalState. */
  private before(): StepBefore {
    return { loop_detected: this.tracker.isLooping, stall_turns: this.tracker.stallTurnCount }
  }

  /** `todoDone`: the step completed an item of the agent's todo list (progress the verdict's delta does not show). */
  private finishStep(
    description: string,
    before: StepBefore,
    tracked: StepVerification,
    checked: WithEvents<DriftCheck>,
    todoDone: boolean,
    opinion?: OpinionOutcome,
  ): StepResult & { events: SessionEvent[] } {
    const step_number = ++this.stepCount
    const { result: drift, events } = checked
    const state = this.tracker.getState()
    const { verification, exceeded, warnings, loop, busy } = this.detection.afterStep(tracked, state, this.tracker.lastRepeatCount, todoDone, opinion)
    pushStepEvents(events, step_number, description, before, state, loop)
    if (busy !== null) events.push({ type: 'stalled', data: { step_number, stall_turns: state.stall_turns, kind: 'busy', busy_steps: busy.count, since: busy.since } })
    for (const w of warnings) events.push({ type: 'budget_warning', data: w })
    if (exceeded !== null) events.push({ type: 'budget_exceeded', data: exceeded })
    return { step_number, verification, drift, state, events }
  }

  /**
   * Scores an action against the goal (or takes `similarity`, see `step`); `drift_detected` when
   * sustained drift begins (once per episode).
   */
  driftCheck(action: string, step_number: number = this.stepCount, similarity?: number): WithEvents<DriftCheck> {
    return this.recordDrift(step_number, action, () => this.dna.check(step_number, action, similarity))
  }

  /** A drift check `check` records, with `drift_detected` when it begins sustained drift. */
  private recordDrift(step_number: number, action: string, check: () => DriftCheck): WithEvents<DriftCheck> {
    const wasDrifting = this.dna.isDrifting()
    const result = check()
    return { result, events: driftEvents(wasDrifting, result, step_number, action) }
  }

  trend(window = 10): DriftTrend {
    return this.dna.getTrend(window)
  }

  /** New goal: new fingerprint and tracker (plan kept, counter at 0); pitfalls, tried approaches and reminder history cleared. */
  setGoal(goal: string): void {
    const startedAt = this.tracker.toJSON().started_at
    const plan = this.tracker.getPlan()
    this.goalText = goal
    const fresh = this.newTracker(goal)
    fresh.setPlan(plan)
    // The session's elapsed time runs from its creation, not from the last goal change.
    this.tracker = GoalTracker.fromJSON({ ...fresh.toJSON(), started_at: startedAt }, this.trackerOptions())
    this.dna = this.newDna(goal)
    this.injector.setGoal(goal)
    this.turn.resetGoal()
    // The files the session changed stay: the repository is the same.
    if (this.reader !== null) this.reader = StepReader.fromJSON(goal, plan, this.reader.toJSON())
  }

  /**
   * A later prompt of the user: it joins the goal (agent-turn.ts), keeping progress, counters and
   * pitfalls, so the user's redirection is scored as on-goal; and a new turn begins.
   */
  userPrompt(prompt: string): void {
    this.turn.newTurn()
    this.detection.newTurn()
    const goal = this.turn.join(this.goalText, prompt)
    if (goal === null) return
    this.goalText = goal
    this.tracker = GoalTracker.fromJSON({ ...this.tracker.toJSON(), goal }, this.trackerOptions())
    this.dna = GoalDNA.fromJSON({ ...this.dna.toJSON(), goal }, { clock: this.clock, keepEvents: false })
    this.injector = GoalReminderInjector.fromJSON({ ...this.injector.toJSON(), goal }, this.clock, { historyText: false })
    if (this.reader !== null) this.reader = StepReader.fromJSON(goal, this.tracker.getPlan(), this.reader.toJSON())
  }

  /** The agent's context was compacted: the next answer that can carry context recites the session (`reciteAfterCompaction`). */
  compacted(): void {
    this.turn.compacted()
  }

  /** Whether a compaction is waiting for its recitation. */
  get compactedSinceRecitation(): boolean {
    return this.turn.recitePending
  }

  /** The recitation block, injected now whatever its schedule (after a compaction); null when there is nothing to recite. */
  reciteNow(): string | null {
    this.turn.recited()
    return this.injectRecitation(this.stepCount + 1, [], { force: true }).recitation?.text ?? null
  }

  /** The agent reported the tools it has (a call to another is named at once); returns the list. */
  reportTools(names: readonly string[]): string[] {
    this.detection.reportTools(names)
    return [...this.detection.tools!.names]
  }

  /** Why the agent should not make this call now, or null (SessionDetection.gate). */
  gateTool(tool: StepTool): string | null {
    return this.detection.gate(tool)
  }

  /**
   * The agent wants to stop: carry on while plan items are open (at most `maxBlocks` times per
   * user turn), never after an `abort` or once the agent's daily budget is spent.
   */
  stop(maxBlocks: number, agentBudgetSpent = false): WithEvents<StopCheck> {
    const open = (this.context.plan_tasks ?? planTasks(this.tracker)).filter((t) => t.status !== 'completed').map((t) => t.description)
    const result = this.turn.stop(open, this.detection.aborted || agentBudgetSpent, maxBlocks)
    const data = { step_number: this.stepCount, outcome: result.outcome, open_items: result.open_items }
    return { result, events: result.block === null ? [{ type: 'stopped', data }] : [] }
  }

  setPlan(steps: readonly string[]): void {
    this.tracker.setPlan(steps)
    this.reader?.setPlan(steps)
  }

  resetDrift(): GoalState {
    this.dna.resetConsecutive()
    return this.state()
  }

  resetLoop(): GoalState {
    this.tracker.resetLoopDetection()
    this.detection.resetLoop()
    return this.state()
  }

  /** Why `skip_unchanged` holds back a block identical to the last one injected, or null. */
  unchangedSkip(kind: 'goal_reminder' | 'recitation', text: string, turn: number): UnchangedSkip | null {
    return this.detection.skip(kind, text, turn)
  }

  addPitfall(text: string): string[] {
    this.injector.recordPitfall(text)
    return this.injector.pitfalls
  }

  addTriedApproach(text: string): string[] {
    this.injector.recordTriedApproach(text)
    return this.injector.triedApproaches
  }

  /** Builds a goal reminder and records it as shown (as `recordReminder`); progress and drift default to the live state. */
  reminder(turn: number, overrides: ReminderOverrides = {}): GoalReminder {
    const reminder = this.reminderPreview(turn, overrides)
    if (reminder.text !== '') this.recordReminder(reminder)
    return reminder
  }

  /** Records a reminder built by `reminderPreview` as shown. */
  recordReminder(reminder: GoalReminder): void {
    this.injector.recordReminder(reminder)
    this.detection.recordInjected('goal_reminder', reminder.text, reminder.turn_number)
  }

  /** Read-only: the reminder `reminder` would build now, not recorded. */
  reminderPreview(turn: number, overrides: ReminderOverrides = {}): GoalReminder {
    return this.injector.composeReminder(reminderInputOf(this.tracker, this.dna.isDrifting(), turn, overrides))
  }

  /** Replaces the context fields given; the others are kept. */
  setContext(context: RecitationContext): RecitationContext {
    this.context = mergeContext(this.context, context)
    return this.getContext()
  }

  private recitationState(iteration: number, contextTokens?: number): RecitationState {
    return recitationStateOf(this.goalText, this.context, this.tracker, iteration, contextTokens)
  }

  /** Read-only: what an injection at `iteration` would do, without recording it. */
  recitation(iteration: number, contextTokens?: number): RecitationPreview {
    return recitationPreview(this.config.recitation, this.recitationManager, this.detection, this.recitationState(iteration, contextTokens))
  }

  /**
   * Inserts the block before the last user message when due (or forced) and records the injection.
   * With skip_unchanged, a due block identical to the last one injected is held back (`skipped`).
   */
  injectRecitation<M extends ChatMessage>(iteration: number, messages: M[], opts: { contextTokens?: number; force?: boolean } = {}): RecitationInjection<M> {
    if (this.detection.settings.skipUnchanged && opts.force !== true) {
      const { skipped } = this.recitation(iteration, opts.contextTokens)
      if (skipped !== undefined) return { messages, injected: false, recitation: null, skipped }
    }
    const r = this.recitationManager.inject(messages, this.recitationState(iteration, opts.contextTokens), { force: opts.force === true })
    if (r.recitation !== null && r.injected) this.detection.recordInjected('recitation', r.recitation.content, iteration)
    return {
      messages: r.messages,
      injected: r.injected,
      recitation: r.recitation === null ? null : { text: r.recitation.text, token_estimate: r.recitation.token_estimate },
    }
  }

  summary(): SessionSummary {
    return sessionSummary(this.goalText, this.tracker.getSummary(), this.dna.getSummary(), this.injector.getStats())
  }

  static fromJSON(json: GoalSessionJSON, options: GoalSessionOptions = {}): GoalSession {
    return new GoalSession({ goal: json.goal, config: json.config }, options, json)
  }
}
