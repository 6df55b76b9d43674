import fc from 'fast-check'
import { expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { authorization, expectTemplatesAccepted, fuzzRoutes, fuzzWrongTypes, isoLike, junkBody, mostly, rawBody, text, withJunkField, type FuzzRoute, type TypedTemplate } from './fuzz-arbitraries.js'
import { createSession } from './sessions-fixtures.js'

/** Fuzz of the reminder, settings and turn-start routes (the session routes: sessions-fuzz). */

const NOW = Date.parse('2026-11-22T09:00:00.000Z')

/** One reminder of each kind the agent keeps while the fuzz runs (replaced once no longer live). */
const TEMPLATES: Record<string, unknown>[] = [
  { title: 'standup', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00Z' }, priority: 'urgent' },
  { title: 'past due', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } },
  { title: 'weekly', trigger: { type: 'recurring', cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' }, missed_policy: 'all' },
  { title: 'agent tz', trigger: { type: 'recurring', cron: '*/5 * * * *' }, priority: 'low' },
  { title: 'deploys', body: 'check the rollback plan', trigger: { type: 'context', pattern: 'deploy production' }, context_tags: ['ops'] },
]

interface World {
  t: TestApp
  a: TestAgent
  sessions: string[]
  /** The caller's live fixture reminders, then another agent's reminder. */
  reminders: string[]
  foreign: string
}

async function world(): Promise<World> {
  const t = await buildTestApp({ clock: () => NOW })
  const a = await t.createAgent('a')
  const b = await t.createAgent('b')
  const sessions = [await createSession(t, a), await createSession(t, b)]
  const foreign = (await t.app.services.reminders.create(b.id, { title: 'theirs', trigger: { type: 'context', pattern: 'deploy' } } as never)).id
  const w: World = { t, a, sessions, reminders: [], foreign }
  await refresh(w)
  return w
}

/** Replaces fixture reminders that were completed, dismissed or deleted, so later runs can use them. */
async function refresh(w: World): Promise<void> {
  const live = (id: string) => w.t.db.get("SELECT 1 AS one FROM reminders WHERE id = ? AND status NOT IN ('completed', 'dismissed')", [id])
  for (const [i, tpl] of TEMPLATES.entries()) {
    const id = w.reminders[i]
    if (id !== undefined && (await live(id))) continue
    const s = w.t.app.services
    if ((await new ReminderRepository(w.t.db).countLive(w.a.id)) >= (await s.settings.get(w.a.id)).max_reminders) await s.settings.put(w.a.id, { max_reminders: 1_000_000 })
    w.reminders[i] = (await s.reminders.create(w.a.id, tpl as never)).id
  }
}

const cron = fc.oneof(
  fc.constantFrom(
    '0 9 * * MON-FRI',
    '*/5 * * * *',
    '0 0 30 2 *',
    '0 0 31 4 *',
    '* * * * * *',
    '61 * * * *',
    '*/0 * * * *',
    '0 0 L * *',
    '0 0 ? * *',
    '0-59/1000 * * * *',
    '0 0 29 2 1',
    '@daily',
    '0 9 * * 8',
    '5-3 * * * *',
    '0 0 1 1 0',
    '0 0 * * 7#5',
    '0 0 LW * *',
    '  0  9 * * * ',
  ),
  fc.array(fc.constantFrom('*', '0', '59', '60', '*/7', '1-5', '1,2,3', 'MON', 'JAN', '-1', '99999999999999999999', 'L', '#', '?', '/'), { minLength: 1, maxLength: 6 }).map((a) => a.join(' ')),
  fc.string({ maxLength: 30 }),
)
const timezone = fc.oneof(
  fc.constantFrom(
    'UTC',
    'utc',
    'America/New_York',
    'Asia/Kathmandu',
    'Australia/Lord_Howe',
    'Etc/GMT+14',
    'Etc/GMT-14',
    'EST5EDT',
    'SystemV/AST4',
    'US/Pacific-New',
    'Mars/Olympus',
    '+05:00',
    'local',
    'Europe/Berlin',
  ),
  fc.string({ maxLength: 64 }),
)
/** Pattern and message text, with FTS5 syntax in it. */
const ftsText = fc.oneof(fc.constantFrom('deploy', 'deploy production', '"', '(', 'NEAR(a b)', '*', 'title:x', '^deploy', '"unterminated', '-x', 'a OR', 'AND', 'the', 'é', '{x}'), text(200))
const trigger = fc.oneof(
  { arbitrary: fc.record({ type: fc.constant('scheduled'), at: isoLike }), weight: 3 },
  { arbitrary: fc.record({ type: fc.constant('recurring'), cron, timezone: fc.option(timezone) }, { requiredKeys: ['type', 'cron'] }), weight: 3 },
  { arbitrary: fc.record({ type: fc.constant('context'), pattern: ftsText }), weight: 3 },
  fc.record({ type: fc.constantFrom('scheduled', 'recurring', 'context', 'cron'), at: isoLike, cron, pattern: ftsText, timezone }, { requiredKeys: [] }),
)
const sessionId = (w: World) => mostly(fc.constantFrom(null, 'ses_nope', ...w.sessions), fc.string({ maxLength: 70 }))
const reminderFields = (w: World) => ({
  title: text(200),
  body: text(4000),
  trigger,
  priority: mostly(fc.constantFrom('urgent', 'normal', 'low'), fc.constantFrom('high', 'URGENT')),
  context_tags: fc.array(text(50), { maxLength: 21 }),
  quiet_hours_exempt: fc.boolean(),
  session_id: sessionId(w),
  missed_policy: mostly(fc.constantFrom('once', 'skip', 'all'), fc.constantFrom('never', '')),
})
const createBody = (w: World) => withJunkField(fc.record(reminderFields(w), { requiredKeys: ['title', 'trigger'] }))
const patchBody = (w: World) => withJunkField(fc.record(reminderFields(w), { requiredKeys: [] }))
const REMINDER_FIELDS = ['title', 'body', 'trigger', 'priority', 'context_tags', 'quiet_hours_exempt', 'session_id', 'missed_policy']
const minutes = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -1, 1e308, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 64, 0.5, -0, 30))
const snoozeBody = withJunkField(fc.oneof(fc.record({ minutes }), fc.record({ until: isoLike }), fc.record({ minutes, until: isoLike }, { requiredKeys: [] })))
const hhmm = mostly(fc.constantFrom('22:00', '07:30', '00:00', '23:59'), fc.oneof(fc.constantFrom('24:00', '7:00', '12:60', ''), fc.string({ maxLength: 6 })))
const settingsBody = withJunkField(
  fc.record(
    {
      timezone,
      quiet_hours: fc.oneof(fc.constant(null), fc.record({ start: hhmm, end: hhmm })),
      max_reminders: mostly(fc.integer({ min: 1, max: 1_000_000 }), fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, 1_000_001, 2 ** 53))),
      injection_budget_tokens: mostly(fc.integer({ min: 0, max: 200_000 }), fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 200_001, 2 ** 53))),
    },
    { requiredKeys: [] },
  ),
)
const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'system', ''), content: fc.jsonValue({ maxDepth: 2 }) })
const turnBody = (w: World) =>
  withJunkField(
    fc.record(
      {
        user_message: ftsText,
        session_id: sessionId(w),
        iteration: mostly(fc.nat(20), fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e300, 2 ** 53 + 2))),
        messages: fc.array(mostly(message, fc.record({ role: fc.string() }, { requiredKeys: [] })), { maxLength: 3 }),
        now: isoLike,
      },
      { requiredKeys: ['user_message'] },
    ),
  )
const body = (nearValid: fc.Arbitrary<unknown>, fields: string[]) => rawBody(fc.oneof({ arbitrary: nearValid, weight: 4 }, junkBody(fields)))

function routes(w: World): FuzzRoute[] {
  const page = { limit: fc.constantFrom('1', '2', '50', '200'), cursor: fc.constantFrom(...w.reminders, w.foreign, 'rem_0', 'rem_zzzz', 'zzz') }
  const at = isoLike.filter((s) => s.length > 0)
  return [
    { method: 'POST', path: '/v1/reminders', body: body(createBody(w), REMINDER_FIELDS) },
    {
      method: 'GET',
      path: '/v1/reminders',
      query: {
        status: fc.constantFrom('pending', 'triggered', 'completed', 'dismissed', 'snoozed'),
        priority: fc.constantFrom('urgent', 'normal', 'low'),
        trigger_type: fc.constantFrom('scheduled', 'recurring', 'context'),
        tag: fc.constantFrom('ops', 'daily'),
        ...page,
      },
    },
    { method: 'GET', path: '/v1/reminders/due', query: { as_of: at, ...page } },
    { method: 'GET', path: '/v1/reminders/search', query: { q: ftsText, limit: page.limit } },
    { method: 'GET', path: '/v1/reminders/{id}' },
    { method: 'PATCH', path: '/v1/reminders/{id}', body: body(patchBody(w), REMINDER_FIELDS) },
    { method: 'DELETE', path: '/v1/reminders/{id}' },
    { method: 'POST', path: '/v1/reminders/{id}/complete' },
    { method: 'POST', path: '/v1/reminders/{id}/dismiss' },
    { method: 'POST', path: '/v1/reminders/{id}/trigger' },
    { method: 'POST', path: '/v1/reminders/{id}/snooze', body: body(snoozeBody, ['minutes', 'until']) },
    { method: 'GET', path: '/v1/reminders/{id}/occurrences', query: { count: fc.constantFrom('1', '5', '50'), from: at } },
    { method: 'GET', path: '/v1/settings' },
    { method: 'PUT', path: '/v1/settings', body: body(settingsBody, ['timezone', 'quiet_hours', 'max_reminders', 'injection_budget_tokens']) },
    { method: 'POST', path: '/v1/turns', body: body(turnBody(w), ['user_message', 'session_id', 'iteration', 'messages', 'now']) },
  ]
}

it('random reminder, settings and turn requests never cause a 5xx, and a rejected one changes no stored data', { timeout: 60_000 }, async () => {
  const w = await world()
  const rejected = await fuzzRoutes(w.t, {
    routes: routes(w),
    ids: { id: { prefix: 'rem', known: () => [...w.reminders, w.foreign] } },
    authorization: authorization(w.a.apiKey, w.t.adminToken),
    foreign: () => [w.foreign],
    after: () => refresh(w),
    numRuns: 600,
    // Found on PostgreSQL: a NUL character in a query string was a 500.
    examples: [{ method: 'GET', path: '/v1/reminders/search', query: 'q=a%00b', authorization: `Bearer ${w.a.apiKey}` }],
  })
  expect(rejected).toBeGreaterThan(200)
})

/** Valid bodies whose every scalar leaf has a declared type (message content is free-form). */
function typed(w: World): TypedTemplate[] {
  const full = {
    title: 'standup',
    body: 'say what you did',
    priority: 'urgent',
    context_tags: ['ops', 'daily'],
    quiet_hours_exempt: true,
    session_id: w.sessions[0],
    missed_policy: 'skip',
  }
  return [
    { method: 'POST', url: '/v1/reminders', payload: { ...full, trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } } },
    { method: 'POST', url: '/v1/reminders', payload: { ...full, trigger: { type: 'recurring', cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' } } },
    { method: 'POST', url: '/v1/reminders', payload: { ...full, trigger: { type: 'context', pattern: 'deploy production' } } },
    { method: 'PATCH', url: `/v1/reminders/${w.reminders[0]}`, payload: { ...full, trigger: { type: 'recurring', cron: '*/5 * * * *', timezone: 'UTC' } } },
    { method: 'POST', url: `/v1/reminders/${w.reminders[2]}/snooze`, payload: { minutes: 30 } },
    { method: 'POST', url: `/v1/reminders/${w.reminders[2]}/snooze`, payload: { until: '2026-11-22T12:00:00Z' } },
    { method: 'PUT', url: '/v1/settings', payload: { timezone: 'Europe/Berlin', quiet_hours: { start: '22:00', end: '07:00' }, max_reminders: 50, injection_budget_tokens: 1000 } },
    {
      method: 'POST',
      url: '/v1/turns',
      payload: { user_message: 'deploy production now', session_id: w.sessions[0], iteration: 2, messages: [{ role: 'user', content: 'hi' }], now: '2026-11-22T09:30:00Z' },
    },
  ]
}

it('every typed reminder, settings and turn template is accepted as is', async () => {
  const w = await world()
  await expectTemplatesAccepted(w.t, typed(w), w.a.headers, () => refresh(w))
})

it('a wrongly typed scalar anywhere in a reminder, snooze, settings or turn body is a 400 and changes no stored data', async () => {
  const w = await world()
  await fuzzWrongTypes(w.t, typed(w), w.a.headers, { numRuns: 300, skip: (path, key) => key === 'content' && path.includes('messages') })
})
