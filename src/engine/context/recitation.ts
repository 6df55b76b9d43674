/**
 * RecitationManager: every few iterations a status block (goal, plan,
 * todos, memory) goes in as a system message just before the last user message, where the
 * model's recency bias keeps it in view. The block's text is built in recitation-content.ts.
 */
import { type Clock, isoAt, wallClock } from '../clock.js'
import { buildRecitationContent, type RecitationSource, type RecitationState } from './recitation-content.js'
import { defined } from '../defined.js'

export type { PlanTask, RecitationSource, RecitationState, TodoItem } from './recitation-content.js'
export { RECITATION_TRUNCATION_MARKER } from './recitation-content.js'

export interface RecitationConfig {
  /** Inject every N iterations, or 'adaptive': N from `calculateOptimalFrequency(context_tokens)`. */
  frequency: number | 'adaptive'
  sources: RecitationSource[]
  max_tokens: number
  track_history: boolean
}

export interface RecitationOptions extends Partial<RecitationConfig> {
  /** Output for the 'custom' source; kept in memory only (not serialized). */
  customBuilder?: (state: RecitationState) => string | null | undefined
  clock?: Clock
}

export interface ChatMessage {
  role: string
  content: unknown
  [extra: string]: unknown
}

export interface RecitationHistoryEntry {
  iteration: number
  timestamp: string
  content: string
  /** The sources that produced a part of this block. */
  sources: RecitationSource[]
}

export interface RecitationBlock {
  /** The status block without its header. */
  content: string
  /** `[Current Status - Iteration N]\n` + content: what is injected. */
  text: string
  /** Tokens of `content` (≤ max_tokens). */
  token_estimate: number
  sources: RecitationSource[]
}

export interface InjectionResult<M extends ChatMessage> {
  messages: M[]
  injected: boolean
  recitation: RecitationBlock | null
}

export type RecitationEvent =
  | { type: 'recitation.injected'; iteration: number; sources: RecitationSource[] }
  | { type: 'recitation.skipped'; iteration: number; reason: 'not_due' | 'no_content' }
  | { type: 'recitation.built'; iteration: number; token_estimate: number }

export type RecitationListener = (event: RecitationEvent) => void

export interface RecitationJSON {
  config: RecitationConfig
  last_injection_iteration: number
  adaptive_frequency: number
  history: RecitationHistoryEntry[]
}

export const RECITATION_DEFAULTS: RecitationConfig = {
  frequency: 5,
  sources: ['goal', 'plan', 'todo'],
  max_tokens: 500,
  track_history: true,
}

/**
 * History entries kept, newest last. Bounded, as a session lives for
 * thousands of iterations and is persisted as JSON, so we keep the last 100 (≥ 500 iterations at
 * the default frequency).
 */
export const RECITATION_HISTORY_LIMIT = 100

/** Frequency used in 'adaptive' mode before any context size is known (the fixed default's 5). */
const ADAPTIVE_START = 5

/** Heavier contexts recite more often: <10k → 10, <30k → 7, <60k → 5, else 3. */
export function calculateOptimalFrequency(contextTokens: number): number {
  if (contextTokens < 10_000) return 10
  if (contextTokens < 30_000) return 7
  if (contextTokens < 60_000) return 5
  return 3
}

export const recitationHeader = (iteration: number): string => `[Current Status - Iteration ${iteration}]\n`

export class RecitationManager {
  private config: RecitationConfig
  private customBuilder: RecitationOptions['customBuilder']
  private readonly clock: Clock
  private lastInjection = 0
  private adaptiveFrequency = ADAPTIVE_START
  private history: RecitationHistoryEntry[] = []
  private readonly listeners = new Set<RecitationListener>()

  constructor(options: RecitationOptions = {}) {
    const { customBuilder, clock = wallClock, ...config } = options
    this.config = validConfig({ ...RECITATION_DEFAULTS, ...defined(config) })
    this.customBuilder = customBuilder
    this.clock = clock
  }

  getConfig(): RecitationConfig {
    return { ...this.config, sources: [...this.config.sources] }
  }

  updateConfig(partial: Partial<RecitationConfig>): void {
    this.config = validConfig({ ...this.config, ...defined(partial) })
  }

  setCustomBuilder(builder: RecitationOptions['customBuilder']): void {
    this.customBuilder = builder
  }

  /**
   * The frequency in force. In 'adaptive' mode a given `contextTokens` picks it (and is
   * remembered for later calls without one).
   */
  frequencyFor(contextTokens?: number): number {
    if (this.config.frequency !== 'adaptive') return this.config.frequency
    if (contextTokens !== undefined && Number.isFinite(contextTokens)) {
      this.adaptiveFrequency = calculateOptimalFrequency(contextTokens)
    }
    return this.adaptiveFrequency
  }

  /** Iteration 1 always; afterwards when `frequency` iterations have passed since the last injection. */
  shouldInject(iteration: number, contextTokens?: number): boolean {
    if (iteration === 1) return true
    return iteration - this.lastInjection >= this.frequencyFor(contextTokens)
  }

  get lastInjectionIteration(): number {
    return this.lastInjection
  }

  /** The status block for `state`, at most `max_tokens` tokens, or null when nothing to say. */
  buildRecitation(state: RecitationState): string | null {
    return this.buildBlock(state)?.content ?? null
  }

  /** Like `buildRecitation`, with the header, token count and contributing sources. */
  buildBlock(state: RecitationState): RecitationBlock | null {
    const built = buildRecitationContent(state, this.config, this.customBuilder)
    if (built === null) return null
    this.emit({ type: 'recitation.built', iteration: state.iteration, token_estimate: built.tokens })
    return {
      content: built.content,
      text: recitationHeader(state.iteration) + built.content,
      token_estimate: built.tokens,
      sources: built.sources,
    }
  }

  /** `inject` returning only the messages (the same array when nothing was injected). */
  injectIfNeeded<M extends ChatMessage>(messages: M[], state: RecitationState): Array<M | ChatMessage> {
    return this.inject(messages, state).messages
  }

  /** Injects regardless of the schedule (still skipped when there is no content). */
  forceInject<M extends ChatMessage>(messages: M[], state: RecitationState): Array<M | ChatMessage> {
    return this.inject(messages, state, { force: true }).messages
  }

  /**
   * When due (or forced) and there is content, returns a new array with the block inserted as a
   * system message just before the last user message (appended when there is none) and records
   * the injection; otherwise returns the same array. Message objects are never copied or changed.
   */
  inject<M extends ChatMessage>(messages: M[], state: RecitationState, opts: { force?: boolean } = {}): InjectionResult<M | ChatMessage> {
    const { iteration } = state
    if (!opts.force && !this.shouldInject(iteration, state.context_tokens)) {
      this.emit({ type: 'recitation.skipped', iteration, reason: 'not_due' })
      return { messages, injected: false, recitation: null }
    }
    const block = this.buildBlock(state)
    if (block === null) {
      this.emit({ type: 'recitation.skipped', iteration, reason: 'no_content' })
      return { messages, injected: false, recitation: null }
    }
    const message: ChatMessage = { role: 'system', content: block.text }
    let lastUser = -1
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.role === 'user') {
        lastUser = i
        break
      }
    }
    const out: Array<M | ChatMessage> = lastUser === -1 ? [...messages, message] : [...messages.slice(0, lastUser), message, ...messages.slice(lastUser)]
    this.lastInjection = iteration
    if (this.config.track_history) {
      this.history.push({ iteration, timestamp: isoAt(this.clock()), content: block.content, sources: block.sources })
      if (this.history.length > RECITATION_HISTORY_LIMIT) this.history.shift()
    }
    this.emit({ type: 'recitation.injected', iteration, sources: block.sources })
    return { messages: out, injected: true, recitation: block }
  }

  getHistory(): RecitationHistoryEntry[] {
    return this.history.map((h) => ({ ...h, sources: [...h.sources] }))
  }

  /** Empties the history and makes the next iteration due again. */
  clearHistory(): void {
    this.history = []
    this.lastInjection = 0
  }

  /** Subscribes to events; returns the unsubscribe function. Listener errors are swallowed. */
  on(listener: RecitationListener): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  private emit(event: RecitationEvent): void {
    for (const l of this.listeners) {
      try {
        l(event)
      } catch {
        // A faulty listener must not break the agent loop.
      }
    }
  }

  toJSON(): RecitationJSON {
    return {
      config: this.getConfig(),
      last_injection_iteration: this.lastInjection,
      adaptive_frequency: this.adaptiveFrequency,
      history: this.getHistory(),
    }
  }

  static fromJSON(json: RecitationJSON, opts: Pick<RecitationOptions, 'clock' | 'customBuilder'> = {}): RecitationManager {
    const m = new RecitationManager({ ...json.config, ...opts })
    m.lastInjection = json.last_injection_iteration
    m.adaptiveFrequency = json.adaptive_frequency
    m.history = json.history.slice(-RECITATION_HISTORY_LIMIT).map((h) => ({ ...h, sources: [...h.sources] }))
    return m
  }
}

function validConfig(c: RecitationConfig): RecitationConfig {
  if (c.frequency !== 'adaptive' && !(Number.isFinite(c.frequency) && c.frequency >= 0)) {
    throw new RangeError("frequency must be a number >= 0 or 'adaptive'")
  }
  if (!(Number.isInteger(c.max_tokens) && c.max_tokens > 0)) throw new RangeError('max_tokens must be a positive integer')
  return { ...c, sources: [...c.sources] }
}
