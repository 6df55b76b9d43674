/**
 * What both framework adapters share: posting steps to one goal session, keeping the verdicts,
 * deciding when the loop should stop, and fetching the guidance (goal reminder, recitation) to
 * put before the next model call.
 */
import type { Goalkeeper } from '../client.js'
import type { RecommendedAction, StepInput, StepResult } from '../types.js'

export interface SessionGuardOptions {
  client: Goalkeeper
  sessionId: string
  /** Verdicts that stop the loop (default `['abort']`; add `'replan'` to stop and replan outside). */
  stopOn?: RecommendedAction[]
  /**
   * When to add the goal reminder before a model call: after a verdict other than `continue`
   * (`'on-drift'`, the default), before every call (`'always'`) or never.
   */
  reminder?: 'on-drift' | 'always' | 'never'
  /** Insert the recitation block when the session's schedule says it is due (default true). */
  recitation?: boolean
  /** Called with every verdict, in step order. */
  onVerdict?: (result: StepResult) => void
}

/** Where the guidance goes in a message list of `count` messages, and what it says. */
export interface Guidance {
  /** The recitation block and the index to insert it at (the server's choice). */
  recitation?: { index: number; text: string }
  /** The goal reminder, to append as the last system message. */
  reminder?: string
}

// The server's limits for a step (API: description ≤ 10 000, output ≤ 200 000 characters).
const DESCRIPTION_MAX = 10_000
const OUTPUT_MAX = 200_000

export class SessionGuard {
  readonly client: Goalkeeper
  readonly sessionId: string
  readonly verdicts: StepResult[] = []
  private readonly stopOn: ReadonlySet<RecommendedAction>
  private readonly reminderMode: 'on-drift' | 'always' | 'never'
  private readonly recitationOn: boolean
  private readonly onVerdict: ((result: StepResult) => void) | undefined
  private pending: Promise<unknown> = Promise.resolve()
  private failure: { err: unknown } | undefined

  constructor(options: SessionGuardOptions) {
    this.client = options.client
    this.sessionId = options.sessionId
    this.stopOn = new Set(options.stopOn ?? ['abort'])
    this.reminderMode = options.reminder ?? 'on-drift'
    this.recitationOn = options.recitation ?? true
    this.onVerdict = options.onVerdict
  }

  /** The latest verdict, once a step has been recorded. */
  get last(): StepResult | undefined {
    return this.verdicts[this.verdicts.length - 1]
  }

  /** True once the latest verdict is one of `stopOn`. */
  get shouldStop(): boolean {
    const action = this.last?.verification.recommended_action
    return action !== undefined && this.stopOn.has(action)
  }

  /**
   * Posts a step; steps are sent one after another in call order (the session judges them in
   * sequence), so `record` may be called without awaiting it and `settled()` awaited later.
   */
  record(step: StepInput): Promise<StepResult> {
    const body: StepInput = { ...step, description: clip(step.description, DESCRIPTION_MAX) || '(empty step)' }
    if (step.output !== undefined) body.output = clip(step.output, OUTPUT_MAX)
    const result = this.pending
      .then(() => this.client.sessions.step(this.sessionId, body))
      .then((r) => {
        this.verdicts.push(r)
        this.onVerdict?.(r)
        return r
      })
    // A failed post is kept for `settled()`, so a caller that did not await it still hears of it.
    this.pending = result.catch((err: unknown) => {
      this.failure ??= { err }
    })
    return result
  }

  /** Waits for every step posted so far; throws (once) the first post that failed since the last call. */
  async settled(): Promise<void> {
    await this.pending
    const failure = this.failure
    this.failure = undefined
    if (failure) throw failure.err
  }

  /**
   * The guidance for the model call of `iteration` over messages with these roles: the
   * recitation when due (recorded as injected) and the goal reminder when the mode asks for it.
   */
  async guidance(iteration: number, roles: string[]): Promise<Guidance> {
    await this.settled()
    const wantReminder = this.reminderMode === 'always' || (this.reminderMode === 'on-drift' && this.last !== undefined && this.last.verification.recommended_action !== 'continue')
    const [recitation, reminder] = await Promise.all([
      this.recitationOn ? this.recitation(iteration, roles) : undefined,
      wantReminder ? this.client.sessions.reminder(this.sessionId, { turn: iteration }) : undefined,
    ])
    return { ...(recitation && { recitation }), ...(reminder && { reminder: reminder.text }) }
  }

  private async recitation(iteration: number, roles: string[]): Promise<Guidance['recitation']> {
    // Only the roles are sent: the server picks the place, the messages stay with the caller.
    const res = await this.client.sessions.recitation(this.sessionId, { iteration, messages: roles.map((role) => ({ role, content: '' })) })
    if (!res.injected || res.recitation === null) return undefined
    const index = res.messages.findIndex((m) => m.content === res.recitation?.text)
    return index < 0 ? undefined : { index, text: res.recitation.text }
  }
}

/** Inserts the guidance into a copy of `messages`, as system messages made by `system`. */
export function applyGuidance<M>(messages: M[], guidance: Guidance, system: (text: string) => M): M[] | undefined {
  if (!guidance.recitation && !guidance.reminder) return undefined
  const out = [...messages]
  if (guidance.recitation) out.splice(guidance.recitation.index, 0, system(guidance.recitation.text))
  if (guidance.reminder) out.push(system(guidance.reminder))
  return out
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
