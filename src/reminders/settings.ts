/**
 * Per-agent settings (timezone, quiet hours, reminder quota, turn-start token budget). A missing
 * row means DEFAULT_SETTINGS. Changing the timezone re-plans recurring reminders that follow
 * it, in the same transaction (through the reminders repository, which owns those writes).
 */
import type { SqlDatabase } from '../db/database.js'
import type { Clock } from '../engine/clock.js'
import { fieldPath, unprocessable } from '../errors.js'
import { fromRequest } from './model.js'
import { validateTimezone } from './occurrences.js'
import { isHhMm } from './quiet-hours.js'
import type { ReminderRepository } from './repository.js'
import { computeNextFire } from './schedule.js'
import { resolveSessionConfig, SessionConfigError, type SessionConfigInput } from '../engine/session/session-config.js'
import { badRequest } from '../errors.js'
import { DEFAULT_HOOK_SETTINGS, type HookSettings } from '../hooks/settings.js'
import { budgetProblem } from '../engine/detection/spend-budget.js'
import { dailyBudgetOf, type DailyBudget } from '../engine/detection/agent-spend.js'

export interface AgentSettings {
  timezone: string
  quiet_hours: { start: string; end: string } | null
  max_reminders: number
  injection_budget_tokens: number
  /** The config of sessions goalkeeper opens itself (coding-agent hooks). */
  session_defaults: SessionConfigInput
  hooks: HookSettings
  /** The agent's budget per day across all its sessions (engine/detection/agent-spend.ts), or null. */
  daily_budget: DailyBudget | null
}

export type SettingsUpdate = Partial<Omit<AgentSettings, 'hooks'>> & { hooks?: Partial<HookSettings> }

const DEFAULT_SETTINGS: Readonly<AgentSettings> = {
  timezone: 'UTC',
  quiet_hours: null,
  max_reminders: 100,
  injection_budget_tokens: 1500,
  session_defaults: {},
  hooks: DEFAULT_HOOK_SETTINGS,
  daily_budget: null,
}
const SETTINGS_BOUNDS = {
  max_reminders: { min: 1, max: 1_000_000 },
  injection_budget_tokens: { min: 0, max: 200_000 },
} as const

interface SettingsRow {
  timezone: string
  quiet_start: string | null
  quiet_end: string | null
  max_reminders: number
  injection_budget_tokens: number
  session_defaults: string
  hooks: string
  daily_budget: string
}

function checkInt(value: number, key: keyof typeof SETTINGS_BOUNDS): number {
  const { min, max } = SETTINGS_BOUNDS[key]
  if (!Number.isInteger(value) || value < min || value > max) {
    throw unprocessable(`${key} must be an integer from ${min} to ${max}.`, [{ path: fieldPath('body', key), message: 'out of range' }])
  }
  return value
}

const SELECT = `SELECT timezone, quiet_start, quiet_end, max_reminders, injection_budget_tokens, session_defaults, hooks, daily_budget
  FROM agent_settings WHERE agent_id = ?`
const UPSERT = `INSERT INTO agent_settings
  (agent_id, timezone, quiet_start, quiet_end, max_reminders, injection_budget_tokens, session_defaults, hooks, daily_budget, updated_at)
  VALUES (@agent_id, @timezone, @quiet_start, @quiet_end, @max_reminders, @injection_budget_tokens, @session_defaults, @hooks, @daily_budget, @updated_at)
  ON CONFLICT (agent_id) DO UPDATE SET timezone = excluded.timezone, quiet_start = excluded.quiet_start,
    quiet_end = excluded.quiet_end, max_reminders = excluded.max_reminders,
    injection_budget_tokens = excluded.injection_budget_tokens, session_defaults = excluded.session_defaults,
    hooks = excluded.hooks, daily_budget = excluded.daily_budget, updated_at = excluded.updated_at`

/** The defaults (the columns' defaults) for an agent that has no row yet. */
const ENSURE = 'INSERT INTO agent_settings (agent_id, updated_at) VALUES (?, ?) ON CONFLICT DO NOTHING'

export class SettingsService {
  private readonly reminders: ReminderRepository
  private readonly db: SqlDatabase
  private readonly clock: Clock
  private readonly forUpdate: string

  constructor(reminders: ReminderRepository, clock: Clock) {
    this.db = reminders.db
    this.clock = clock
    this.reminders = reminders
    this.forUpdate = this.db.dialect === 'postgres' ? ' FOR UPDATE' : ''
  }

  async get(agentId: string): Promise<AgentSettings> {
    return fromRow(await this.db.get<SettingsRow>(SELECT, [agentId]))
  }

  /** Replaces the fields given and keeps the rest. */
  async put(agentId: string, update: SettingsUpdate): Promise<AgentSettings> {
    const given = checked(update)
    const now = this.clock()
    return this.db.transaction(async () => {
      // Read-modify-write under the row's lock (PostgreSQL runs puts concurrently): the row is
      // made first, so there is one to lock even for an agent still on the defaults.
      await this.db.run(ENSURE, [agentId, now])
      const before = fromRow(await this.db.get<SettingsRow>(SELECT + this.forUpdate, [agentId]))
      const { hooks, ...rest } = given
      const next: AgentSettings = { ...before, ...rest, hooks: { ...before.hooks, ...hooks } }
      await this.db.run(UPSERT, {
        agent_id: agentId,
        timezone: next.timezone,
        quiet_start: next.quiet_hours?.start ?? null,
        quiet_end: next.quiet_hours?.end ?? null,
        max_reminders: next.max_reminders,
        injection_budget_tokens: next.injection_budget_tokens,
        session_defaults: JSON.stringify(next.session_defaults),
        hooks: JSON.stringify(next.hooks),
        daily_budget: JSON.stringify(next.daily_budget ?? {}),
        updated_at: now,
      })
      if (before.timezone !== next.timezone) {
        // A re-plan is a change of the reminder (updated_at moves), so a quiet-hours hold taken
        // under the old timezone no longer applies.
        for (const r of await this.reminders.followingAgentTimezone(agentId)) {
          const at = computeNextFire(r, now, next.timezone)
          if (at !== r.next_fire_at) await this.reminders.setNextFire(r, at, now)
        }
      }
      return next
    })
  }
}

function fromRow(row: SettingsRow | undefined): AgentSettings {
  if (!row) return { ...DEFAULT_SETTINGS }
  return {
    timezone: row.timezone,
    quiet_hours: row.quiet_start && row.quiet_end ? { start: row.quiet_start, end: row.quiet_end } : null,
    max_reminders: row.max_reminders,
    injection_budget_tokens: row.injection_budget_tokens,
    session_defaults: JSON.parse(row.session_defaults) as SessionConfigInput,
    hooks: { ...DEFAULT_HOOK_SETTINGS, ...(JSON.parse(row.hooks) as Partial<HookSettings>) },
    daily_budget: dailyBudgetOf(row.daily_budget),
  }
}

/** The fields of `update`, validated (400/422 before anything is written). */
function checked(update: SettingsUpdate): SettingsUpdate {
  const out: SettingsUpdate = {}
  const tz = update.timezone
  if (tz !== undefined)
    out.timezone = fromRequest(
      () => validateTimezone(tz),
      () => fieldPath('body', 'timezone'),
    )
  if (update.quiet_hours !== undefined) {
    const q = update.quiet_hours
    if (q !== null) {
      for (const key of ['start', 'end'] as const) {
        if (!isHhMm(q[key])) {
          throw unprocessable(`quiet_hours.${key} must be "HH:MM" (00:00 to 23:59), got '${q[key]}'.`, [{ path: fieldPath('body', 'quiet_hours', key), message: 'not HH:MM' }])
        }
      }
    }
    out.quiet_hours = q === null ? null : { start: q.start, end: q.end }
  }
  if (update.max_reminders !== undefined) out.max_reminders = checkInt(update.max_reminders, 'max_reminders')
  if (update.injection_budget_tokens !== undefined) {
    out.injection_budget_tokens = checkInt(update.injection_budget_tokens, 'injection_budget_tokens')
  }
  if (update.session_defaults !== undefined) out.session_defaults = checkedSessionDefaults(update.session_defaults)
  if (update.hooks !== undefined) out.hooks = { ...update.hooks }
  if (update.daily_budget !== undefined) out.daily_budget = checkedDailyBudget(update.daily_budget)
  return out
}

/** A daily budget: at least one limit, each > 0, warn_at ascending in (0, 1) (400 naming the field). */
function checkedDailyBudget(b: DailyBudget | null): DailyBudget | null {
  if (b === null) return null
  const problem: [string, string] | null = b.tokens === undefined && b.cost_usd === undefined ? ['daily_budget', 'needs tokens or cost_usd (null: no daily budget)'] : budgetProblem(b, 'daily_budget')
  if (problem !== null) throw badRequest(`Invalid daily_budget: ${problem[0]} ${problem[1]}.`, [{ path: fieldPath('body', ...problem[0].split('/')), message: problem[1] }])
  return { ...b, ...(b.warn_at === undefined ? {} : { warn_at: [...b.warn_at] }) }
}

/** Session defaults pass the same checks as a session's own config (400 naming the field). */
function checkedSessionDefaults(config: SessionConfigInput): SessionConfigInput {
  try {
    resolveSessionConfig(config)
  } catch (err) {
    if (!(err instanceof SessionConfigError)) throw err
    throw badRequest(`Invalid session_defaults: ${err.message}.`, [{ path: fieldPath('body', 'session_defaults', err.field), message: err.message }])
  }
  return structuredClone(config)
}
