/**
 * `POST /v1/turns`: what to inject before the agent's next LLM call. Due reminders and context
 * reminders the user message triggers, plus the goal reminder and recitation of a session, are
 * merged by priority within the agent's `injection_budget_tokens` (InjectionBudgetManager);
 * during quiet hours only urgent or exempt reminders go out. Delivered reminders are fired
 * (`fireReminder`: one-shots become `triggered`, recurring ones stay `pending` and advance) in
 * the same transaction that selected them, without a webhook: the agent has them in the response.
 */
import type { Clock } from '../engine/clock.js'
import { InjectionBudgetManager, type AcceptedInjection } from '../engine/context/injection-budget.js'
import { cachedTokenCount, countTokensByLines } from '../engine/context/token-fit.js'
import { fieldPath, notFound } from '../errors.js'
import { isQuietHours } from './quiet-hours.js'
import { requestInstant, type Reminder, type ReminderRow } from './model.js'
import { compareForInjection, reminderLine, renderInjection, REMINDERS_HEADER, TURN_PRIORITY } from './render.js'
import type { ReminderRepository } from './repository.js'
import type { ReminderSearch } from './search.js'
import type { RemindersService } from './service.js'
import type { SettingsService } from './settings.js'

/** A chat message as the agent sends it (extra fields pass through). */
export interface TurnMessage {
  role: string
  content: unknown
  [key: string]: unknown
}

/** A block a session contributes (goal reminder, recitation); lower priority numbers go first. */
export interface TurnPart {
  kind: string
  priority: number
  content: string
}

/** A block a session held back (skip_unchanged: identical to the last one injected), reported but not injected. */
export interface SkippedPart extends TurnPart {
  skip: { reason: 'unchanged'; last_injected_at: number; resend_at: number }
}

/**
 * Implemented by the sessions service. Throws `notFound('session', id)` for an unknown session
 * or another agent's. May return `messages` with the recitation already placed in them. Calls
 * `fit` once with the parts it returns, before recording any of them as shown: `fit` answers
 * with the indexes of those the token budget keeps.
 */
export interface TurnPartsProvider {
  turnParts(input: {
    agentId: string
    sessionId: string
    iteration: number | undefined
    messages: TurnMessage[] | undefined
    nowMs: number
    fit: (parts: readonly TurnPart[]) => ReadonlySet<number>
  }): Promise<{ parts: TurnPart[]; messages?: TurnMessage[]; skipped?: SkippedPart[] }>
}

export interface TurnInput {
  user_message: string
  session_id?: string
  iteration?: number
  messages?: TurnMessage[]
  /** ISO instant standing in for the clock (replay, tests). */
  now?: string
}

interface TurnPartReport {
  kind: string
  priority: number
  token_estimate: number
  included: boolean
  truncated: boolean
  reminder_id?: string
  /** Why a part was left out: over the token budget, held for quiet hours, or unchanged since last injected (skip_unchanged). */
  reason?: 'budget' | 'quiet_hours' | 'unchanged'
  /** For `unchanged`: the turn it was last injected at, and the turn from which it goes out again anyway. */
  last_injected_at?: number
  resend_at?: number
}

export interface TurnResult {
  reminders: Reminder[]
  injection: { text: string; token_estimate: number }
  parts: TurnPartReport[]
  messages?: TurnMessage[]
}

const MAX_CANDIDATES = 200

export interface TurnsDeps {
  reminders: RemindersService
  /** The reminders' rows: the turn reads the due ones under its own transaction. */
  repo: ReminderRepository
  settings: SettingsService
  search: ReminderSearch
  clock: Clock
  /** The sessions' goal reminder and recitation, when sessions exist. */
  provider?: TurnPartsProvider
}

export class TurnsService {
  private readonly reminders: RemindersService
  private readonly repo: ReminderRepository
  private readonly settings: SettingsService
  private readonly search: ReminderSearch
  private readonly clock: Clock
  private provider: TurnPartsProvider | undefined

  constructor(deps: TurnsDeps) {
    this.reminders = deps.reminders
    this.repo = deps.repo
    this.settings = deps.settings
    this.search = deps.search
    this.clock = deps.clock
    this.provider = deps.provider
  }

  async start(agentId: string, input: TurnInput): Promise<TurnResult> {
    const nowMs = input.now === undefined ? this.clock() : requestInstant(input.now, fieldPath('body', 'now'))
    return this.repo.db.transaction(async (): Promise<TurnResult> => {
      const settings = await this.settings.get(agentId)
      const byId = new Map<string, ReminderRow>()
      // Locked (PostgreSQL) until the turn commits: a concurrent turn or the ticker cannot fire
      // them meanwhile, and one already fired by either is no longer due when read here.
      for (const r of await this.repo.due(agentId, nowMs, MAX_CANDIDATES, true)) byId.set(r.id, r)
      for (const r of await this.search.contextMatches(agentId, input.user_message, nowMs)) byId.set(r.id, r)
      const candidates = [...byId.values()].sort(compareForInjection).slice(0, MAX_CANDIDATES)
      const quiet = isQuietHours(settings, nowMs)
      const held = quiet ? candidates.filter((r) => r.priority !== 'urgent' && r.quiet_hours_exempt !== 1) : []
      const eligible = quiet ? candidates.filter((r) => !held.includes(r)) : candidates

      // The session's parts are fitted while it builds them, so it records only what goes out.
      let fitted: { parts: readonly TurnPart[]; fit: Fit } | undefined
      const fitParts = (parts: readonly TurnPart[]): ReadonlySet<number> => {
        const fit = fitToBudget(parts, eligible, settings.injection_budget_tokens)
        fitted = { parts, fit }
        return new Set(parts.flatMap((_, i) => (fit.accepted.has(`part:${i}`) ? [i] : [])))
      }
      let session: { parts: TurnPart[]; messages?: TurnMessage[]; skipped?: SkippedPart[] } = { parts: [] }
      if (input.session_id !== undefined) {
        // Until sessions exist no session id can be valid for this agent.
        if (!this.provider) throw notFound('session', input.session_id)
        session = await this.provider.turnParts({
          agentId,
          sessionId: input.session_id,
          iteration: input.iteration,
          messages: input.messages,
          nowMs,
          fit: fitParts,
        })
      }
      // No session, or a provider that did not fit exactly the parts it returned: fit them now.
      if (fitted?.parts !== session.parts) fitParts(session.parts)
      const fit = fitted!.fit
      const delivered = eligible.filter((r) => fit.accepted.has(`reminder:${r.id}`))
      const reminders = await this.reminders.markFired(delivered, nowMs, settings.timezone)

      const parts: TurnPartReport[] = [
        ...session.parts.map((p, i) => report(p.kind, p.priority, p.content, fit.accepted.get(`part:${i}`))),
        ...eligible.map((r) => ({
          ...report('reminder', TURN_PRIORITY[r.priority], reminderLine(r), fit.accepted.get(`reminder:${r.id}`)),
          reminder_id: r.id,
        })),
        ...(session.skipped ?? []).map((p) => ({
          kind: p.kind,
          priority: p.priority,
          token_estimate: cachedTokenCount(p.content),
          included: false,
          truncated: false,
          reason: p.skip.reason,
          last_injected_at: p.skip.last_injected_at,
          resend_at: p.skip.resend_at,
        })),
        ...held.map((r) => ({
          kind: 'reminder',
          priority: TURN_PRIORITY[r.priority],
          token_estimate: cachedTokenCount(reminderLine(r)),
          included: false,
          truncated: false,
          reminder_id: r.id,
          reason: 'quiet_hours' as const,
        })),
      ]
      const result: TurnResult = { reminders, injection: { text: fit.text, token_estimate: fit.tokens }, parts }
      if (session.messages !== undefined) result.messages = session.messages
      return result
    })
  }
}

function report(kind: string, priority: number, content: string, accepted: AcceptedInjection | undefined): TurnPartReport {
  if (!accepted) return { kind, priority, token_estimate: cachedTokenCount(content), included: false, truncated: false, reason: 'budget' }
  return { kind, priority, token_estimate: accepted.tokens, included: true, truncated: accepted.truncated }
}

type Fit = ReturnType<typeof fitToBudget>

/**
 * Allocates parts within `budget` and renders them. The allocator counts each part alone, so
 * the header and separators are paid from the budget first; if the rendered text still comes
 * out over (tokens merge differently across joins), the allocation is redone with less.
 */
function fitToBudget(sessionParts: readonly TurnPart[], rows: readonly ReminderRow[], budget: number) {
  const proposals = [
    ...sessionParts.map((p, i) => ({ name: `part:${i}`, priority: p.priority, content: p.content })),
    ...rows.map((r) => ({ name: `reminder:${r.id}`, priority: TURN_PRIORITY[r.priority], content: reminderLine(r) })),
  ]
  const overhead = (rows.length > 0 ? cachedTokenCount(REMINDERS_HEADER) : 0) + 2 * proposals.length
  let allowance = Math.max(0, budget - overhead)
  for (let attempt = 0; attempt < 6; attempt++) {
    const { accepted } = new InjectionBudgetManager({ max_total_tokens: allowance }).allocate(proposals)
    const byName = new Map(accepted.map((a) => [a.name, a]))
    const text = renderInjection(
      sessionParts.flatMap((_, i) => byName.get(`part:${i}`)?.content ?? []),
      rows.flatMap((r) => byName.get(`reminder:${r.id}`)?.content ?? []),
    )
    // Exact (o200k never merges across these line cuts), and unchanged lines are memoized.
    const tokens = countTokensByLines(text)
    const over = tokens - budget
    if (over <= 0) return { text, tokens, accepted: byName }
    allowance = Math.max(0, allowance - over)
  }
  return { text: '', tokens: 0, accepted: new Map<string, AcceptedInjection>() }
}
