/**
 * GoalReminderInjector: a one-line goal reminder for the next LLM call, compressed
 * as the conversation grows (full → compact → ultra_compact by turn number). The clipped text
 * pieces and their token caps live in reminder-pieces.ts.
 */
import { type Clock, isoAt, wallClock } from '../clock.js'
import { COMPACT_ITEM_TOKEN_CAP, FULL_ITEM_TOKEN_CAP, GOAL_TOKEN_CAP, intOr0, newest, percent, piece, type ReminderMode } from './reminder-pieces.js'
import { cachedTokenCount, oneLine } from './token-fit.js'
import { defined } from '../defined.js'

// Callers and tests import the caps from here (and the engine index re-exports this module).
export { COMPACT_ITEM_TOKEN_CAP, FULL_ITEM_TOKEN_CAP, GOAL_TOKEN_CAP } from './reminder-pieces.js'

export type { ReminderMode } from './reminder-pieces.js'

/** The five thresholds are the session config's fields and are stored as they are (GoalReminderJSON.options), so they keep the stored names. */
export interface GoalReminderOptions {
  full_cutoff?: number
  compact_cutoff?: number
  max_pitfalls?: number
  max_tried?: number
  drift_warning_threshold?: number
  clock?: Clock
  /**
   * Keep each reminder's text in the history (default true). Without it the history entries keep
   * their metadata with `text: ''` (all a session reports of them is how many there are).
   */
  historyText?: boolean
}

export type ResolvedReminderOptions = Required<Omit<GoalReminderOptions, 'clock' | 'historyText'>>

export interface GoalProgress {
  current_step: number
  total_steps: number
  /** Fraction complete in [0, 1]. */
  progress_pct: number
  summary?: string
  current_sub_goal?: string
}

export interface BuildReminderInput {
  progress?: GoalProgress
  drift_score?: number
  turn_number?: number
  is_drift_active?: boolean
}

export interface ReminderContext extends BuildReminderInput {
  original_goal: string
  known_pitfalls?: string[]
  tried_approaches?: string[]
}

export interface GoalReminder {
  text: string
  mode: ReminderMode
  token_estimate: number
  turn_number: number
  includes_drift_warning: boolean
  timestamp: string
}

export interface ReminderStats {
  goal: string
  total_reminders: number
  pitfalls_count: number
  tried_approaches_count: number
  history_size: number
}

export interface GoalReminderJSON {
  options: ResolvedReminderOptions
  goal: string
  pitfalls: string[]
  tried_approaches: string[]
  total_reminders: number
  history: GoalReminder[]
}

export const REMINDER_DEFAULTS: ResolvedReminderOptions = {
  full_cutoff: 5,
  compact_cutoff: 15,
  max_pitfalls: 5,
  max_tried: 5,
  drift_warning_threshold: 0.3,
}

/** Reminder history kept, newest last. */
export const REMINDER_HISTORY_LIMIT = 50

/** Adds `item` unless present; over 2× max keeps the newest max. */
function remember(list: string[], item: string, max: number): void {
  const text = oneLine(item)
  if (text === '' || list.includes(text)) return
  list.push(text)
  if (list.length > 2 * max) list.splice(0, list.length - max)
}

export class GoalReminderInjector {
  readonly options: ResolvedReminderOptions
  private readonly clock: Clock
  private readonly historyText: boolean
  private _goal = ''
  private _pitfalls: string[] = []
  private _tried: string[] = []
  private _total = 0
  private history: GoalReminder[] = []

  constructor(options: GoalReminderOptions = {}) {
    const { clock = wallClock, historyText = true, ...rest } = options
    this.options = { ...REMINDER_DEFAULTS, ...defined(rest) }
    const { full_cutoff, compact_cutoff, max_pitfalls, max_tried } = this.options
    if (!(full_cutoff >= 0 && compact_cutoff >= full_cutoff)) {
      throw new RangeError('need 0 <= full_cutoff <= compact_cutoff')
    }
    if (!(max_pitfalls >= 0 && max_tried >= 0)) throw new RangeError('max_pitfalls and max_tried must be >= 0')
    this.clock = clock
    this.historyText = historyText
  }

  get goal(): string {
    return this._goal
  }
  get pitfalls(): string[] {
    return [...this._pitfalls]
  }
  get triedApproaches(): string[] {
    return [...this._tried]
  }
  get totalReminders(): number {
    return this._total
  }

  /** Sets the goal and forgets pitfalls, tried approaches and reminder history. */
  setGoal(goal: string): void {
    this._goal = goal.trim()
    this._pitfalls = []
    this._tried = []
    this.history = []
  }

  recordPitfall(pitfall: string): void {
    remember(this._pitfalls, pitfall, this.options.max_pitfalls)
  }

  recordTriedApproach(approach: string): void {
    remember(this._tried, approach, this.options.max_tried)
  }

  getMode(turn: number): ReminderMode {
    if (turn <= this.options.full_cutoff) return 'full'
    if (turn <= this.options.compact_cutoff) return 'compact'
    return 'ultra_compact'
  }

  /** Builds and records a reminder (history, total). */
  buildReminder(input: BuildReminderInput = {}): GoalReminder {
    const reminder = this.composeReminder(input)
    if (reminder.text !== '') this.recordReminder(reminder)
    return reminder
  }

  /** Read-only: the reminder `buildReminder` would build now, not recorded. */
  composeReminder(input: BuildReminderInput = {}): GoalReminder {
    const { progress, drift_score = 0, turn_number = 0, is_drift_active = false } = input
    const mode = this.getMode(turn_number)
    const timestamp = isoAt(this.clock())
    if (this._goal === '') {
      return { text: '', mode, token_estimate: 0, turn_number, includes_drift_warning: false, timestamp }
    }
    const drift = Number.isFinite(drift_score) ? drift_score : 0
    const warn = drift > this.options.drift_warning_threshold || is_drift_active
    const segments = this.segments(mode, progress, warn ? drift.toFixed(2) : null)
    // Every segment ends with "]" and the next starts with " [", a pre-token boundary of o200k,
    // so the whole text's count is the sum of the (memoized) segment counts.
    let tokens = 0
    for (let i = 0; i < segments.length; i++) {
      tokens += cachedTokenCount(i === 0 ? segments[i]! : ` ${segments[i]!}`)
    }
    const reminder: GoalReminder = {
      text: segments.join(' '),
      mode,
      token_estimate: tokens,
      turn_number,
      includes_drift_warning: warn,
      timestamp,
    }
    return reminder
  }

  /** Records a composed reminder as shown (a turn whose token budget dropped it does not). */
  recordReminder(reminder: GoalReminder): void {
    this._total++
    this.history.push(this.historyText ? reminder : { ...reminder, text: '' })
    if (this.history.length > REMINDER_HISTORY_LIMIT) this.history.shift()
  }

  private segments(mode: ReminderMode, progress: GoalProgress | undefined, drift: string | null): string[] {
    const out = [`[GOAL: ${piece(this._goal, GOAL_TOKEN_CAP[mode])}]`]
    const pct = progress ? percent(progress.progress_pct) : 0
    const steps = progress ? `${intOr0(progress.current_step)}/${intOr0(progress.total_steps)}` : ''
    if (mode === 'ultra_compact') {
      if (progress) out.push(`[PROGRESS: ${pct}%]`)
      if (drift !== null) out.push(`[DRIFT: ${drift}!]`)
      return out
    }
    const cap = mode === 'full' ? FULL_ITEM_TOKEN_CAP : COMPACT_ITEM_TOKEN_CAP
    if (progress) {
      const summary = mode === 'full' && progress.summary ? piece(progress.summary, cap) : ''
      const tail = mode === 'compact' ? `${pct}%` : summary !== '' ? summary : `${pct}% complete`
      out.push(`[PROGRESS: ${steps} - ${tail}]`)
      const focus = progress.current_sub_goal ? piece(progress.current_sub_goal, cap) : ''
      if (focus !== '') out.push(`[FOCUS: ${focus}]`)
    }
    if (mode === 'compact') {
      const latest = this._pitfalls[this._pitfalls.length - 1]
      if (latest !== undefined && this.options.max_pitfalls > 0) out.push(`[AVOID: ${piece(latest, cap)}]`)
      if (drift !== null) out.push(`[DRIFT: ${drift} - refocus]`)
      return out
    }
    const avoid = newest(this._pitfalls, this.options.max_pitfalls).map((p) => piece(p, cap))
    if (avoid.length > 0) out.push(`[AVOID: ${avoid.join('; ')}]`)
    const tried = newest(this._tried, this.options.max_tried).map((t) => piece(t, cap))
    if (tried.length > 0) out.push(`[TRIED: ${tried.join('; ')}]`)
    if (drift !== null) out.push(`[DRIFT WARNING: drift ${drift} - refocus on the goal]`)
    return out
  }

  /** Adopts the context's goal when it differs, merges its pitfalls and tried approaches, builds. */
  buildFromContext(ctx: ReminderContext): GoalReminder {
    if (ctx.original_goal.trim() !== this._goal) this.setGoal(ctx.original_goal)
    for (const p of ctx.known_pitfalls ?? []) this.recordPitfall(p)
    for (const t of ctx.tried_approaches ?? []) this.recordTriedApproach(t)
    return this.buildReminder(ctx)
  }

  getHistory(): GoalReminder[] {
    return this.history.map((r) => ({ ...r }))
  }

  getStats(): ReminderStats {
    return {
      goal: this._goal,
      total_reminders: this._total,
      pitfalls_count: this._pitfalls.length,
      tried_approaches_count: this._tried.length,
      history_size: this.history.length,
    }
  }

  toJSON(): GoalReminderJSON {
    return {
      options: { ...this.options },
      goal: this._goal,
      pitfalls: [...this._pitfalls],
      tried_approaches: [...this._tried],
      total_reminders: this._total,
      history: this.getHistory(),
    }
  }

  static fromJSON(json: GoalReminderJSON, clock: Clock = wallClock, options: Pick<GoalReminderOptions, 'historyText'> = {}): GoalReminderInjector {
    const injector = new GoalReminderInjector({ ...json.options, ...options, clock })
    injector._goal = json.goal
    injector._pitfalls = [...json.pitfalls]
    injector._tried = [...json.tried_approaches]
    injector._total = json.total_reminders
    injector.history = json.history.slice(-REMINDER_HISTORY_LIMIT).map((r) => (injector.historyText ? { ...r } : { ...r, text: '' }))
    return injector
  }
}
