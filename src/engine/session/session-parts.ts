/**
 * The parts one goal session is made of — GoalTracker (verdicts), GoalDNA (drift),
 * GoalReminderInjector (reminders), RecitationManager (status blocks), the recitation context,
 * SessionDetection, the agent's turn and todo list, the step reader — built new or restored from
 * the session's JSON, and that JSON. What a session does with them is GoalSession (goal-session.ts).
 */
import { wallClock, type Clock } from '../clock.js'
import { GoalDNA } from '../drift/goal-dna.js'
import { GoalReminderInjector } from '../context/goal-reminder.js'
import { GoalTracker, type GoalState } from './goal-tracker.js'
import { RecitationManager } from '../context/recitation.js'
import { copySessionConfig, resolveSessionConfig, type SessionConfig, type SessionConfigInput } from './session-config.js'
import { AgentTurn } from './agent-turn.js'
import { TodoList } from './todo-tools.js'
import { SessionDetection } from '../detection/session-detection.js'
import { NEW_SESSION_DETECTION } from '../detection/detection-config.js'
import { StepReader } from '../drift/step-evidence.js'
import type { GoalSessionJSON, GoalSessionOptions, RecitationContext } from './session-types.js'

export class SessionParts {
  readonly config: SessionConfig
  protected readonly clock: Clock
  private readonly llmTimeoutMs: number | undefined
  protected goalText: string
  protected stepCount = 0
  protected context: RecitationContext = {}
  protected tracker: GoalTracker
  protected dna: GoalDNA
  protected injector: GoalReminderInjector
  protected recitationManager: RecitationManager
  protected detection: SessionDetection
  protected turn: AgentTurn
  protected todos: TodoList
  /** Reads steps for evidence (`config.alignment: "evidence"`); null with `keywords` alignment. */
  protected reader: StepReader | null

  /**
   * A new session: the fields of NEW_SESSION_DETECTION it leaves out are filled in and stored.
   * `stored`: a session created earlier, its config taken as it is and its parts restored from it
   * (fromJSON), each built once.
   */
  constructor(init: { goal: string; plan?: readonly string[]; config?: SessionConfigInput }, options: GoalSessionOptions = {}, stored?: GoalSessionJSON) {
    this.config = resolveSessionConfig(stored ? init.config : { ...NEW_SESSION_DETECTION, ...init.config })
    this.clock = options.clock ?? wallClock
    this.llmTimeoutMs = options.llmTimeoutMs
    this.goalText = init.goal
    const c = this.config
    const clock = this.clock
    if (stored) {
      this.stepCount = stored.step_count
      this.context = structuredClone(stored.context)
      this.tracker = GoalTracker.fromJSON(stored.tracker, this.trackerOptions())
      this.dna = GoalDNA.fromJSON(stored.dna, { clock, keepEvents: false })
      this.injector = GoalReminderInjector.fromJSON(stored.reminder, clock, { historyText: false })
      this.recitationManager = RecitationManager.fromJSON(stored.recitation, { clock })
      this.turn = AgentTurn.fromJSON(stored.turn)
      this.todos = TodoList.fromJSON(stored.todos)
      this.detection = SessionDetection.fromJSON(c, stored.detection)
      this.reader = this.detection.settings.evidence ? StepReader.fromJSON(init.goal, stored.tracker.plan, stored.reader) : null
      return
    }
    this.tracker = this.newTracker(init.goal)
    this.tracker.setPlan(init.plan ?? [])
    this.dna = this.newDna(init.goal)
    this.injector = new GoalReminderInjector({
      full_cutoff: c.full_cutoff,
      compact_cutoff: c.compact_cutoff,
      max_pitfalls: c.max_pitfalls,
      max_tried: c.max_tried,
      drift_warning_threshold: c.drift_warning_threshold,
      clock,
      historyText: false,
    })
    this.injector.setGoal(init.goal)
    // The session's history lives in the steps table; the manager's own history would bloat the snapshot.
    this.recitationManager = new RecitationManager({ ...c.recitation, track_history: false, clock })
    this.detection = new SessionDetection(c)
    this.turn = new AgentTurn()
    this.todos = new TodoList()
    this.reader = this.detection.settings.evidence ? StepReader.fromJSON(init.goal, init.plan ?? [], undefined) : null
  }

  /** The step log lives in the steps table, so the tracker keeps no verification history. */
  protected trackerOptions() {
    return { clock: this.clock, keepHistory: false, ...(this.llmTimeoutMs === undefined ? {} : { llmTimeoutMs: this.llmTimeoutMs }) }
  }

  protected newTracker(goal: string): GoalTracker {
    return new GoalTracker(goal, this.trackerOptions())
  }

  protected newDna(goal: string): GoalDNA {
    const c = this.config
    return new GoalDNA(goal, {
      similarity: c.similarity,
      driftThreshold: c.drift_threshold,
      consecutiveLimit: c.consecutive_limit,
      historySize: c.history_size,
      clock: this.clock,
      keepEvents: false,
    })
  }

  get goal(): string {
    return this.goalText
  }
  get plan(): string[] {
    return this.tracker.getPlan()
  }
  get stepsTaken(): number {
    return this.stepCount
  }

  state(): GoalState {
    return this.tracker.getState()
  }

  getContext(): RecitationContext {
    // Most sessions never set a context: skip structuredClone's fixed cost for an empty one.
    for (const _ in this.context) return structuredClone(this.context)
    return {}
  }

  /**
   * The whole state, kept small because it is written on every step: the step log and drift
   * events live in their own tables, so the tracker's verification history and the GoalDNA event
   * list are left out, and reminder history keeps only its entries' metadata (its size is all a
   * session reports). None of these feed any later result, so the session does not even keep
   * them in memory (`keepHistory`, `keepEvents`, `historyText` off).
   */
  toJSON(): GoalSessionJSON {
    return {
      goal: this.goalText,
      config: copySessionConfig(this.config),
      step_count: this.stepCount,
      context: this.getContext(),
      tracker: this.tracker.toJSON(),
      dna: this.dna.toJSON(),
      reminder: this.injector.toJSON(),
      recitation: this.recitationManager.toJSON(),
      detection: this.detection.toJSON(),
      turn: this.turn.toJSON(),
      todos: this.todos.toJSON(),
      ...(this.reader === null ? {} : { reader: this.reader.toJSON() }),
    }
  }
}
