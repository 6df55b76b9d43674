import fc from 'fast-check'
import { expect, it } from 'vitest'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { authorization, expectTemplatesAccepted, fuzzRoutes, fuzzWrongTypes, junkBody, mostly, rawBody, text, withJunkField, type FuzzRoute, type TypedTemplate } from './fuzz-arbitraries.js'

/**
 * Fuzz of the webhook routes. Loopback URLs are allowed (as in webhooks.test.ts), so no URL
 * needs DNS; port 9 refuses connections, so the one dispatcher run logs failed attempts.
 */

const HOOK = 'http://127.0.0.1:9/hook'

interface World {
  t: TestApp
  a: TestAgent
  /** The caller's webhooks and a message queued for each (replaced when a request deletes one). */
  own: { webhook: string; message: string }[]
  foreign: { webhook: string; message: string }
}

async function subscribe(t: TestApp, agentId: string): Promise<{ webhook: string; message: string }> {
  const s = t.app.services.webhooks
  const webhook = (await s.create(agentId, { url: HOOK })).id
  return { webhook, message: (await s.sendTest(agentId, webhook)).message_id }
}

async function world(): Promise<World> {
  const t = await buildTestApp({ env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
  const a = await t.createAgent('a')
  const b = await t.createAgent('b')
  const w: World = { t, a, own: [await subscribe(t, a.id), await subscribe(t, a.id)], foreign: await subscribe(t, b.id) }
  // One delivery round (connection refused) so the attempts log has rows to page through.
  const dispatcher = new Dispatcher({ db: t.db, settings: { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }, clock: Date.now })
  await dispatcher.runDue()
  await dispatcher.stop()
  return w
}

async function refresh(w: World): Promise<void> {
  const exists = async (id: string) => (await w.t.db.get('SELECT 1 FROM webhooks WHERE id = ?', [id])) !== undefined
  for (const [i, f] of w.own.entries()) if (!(await exists(f.webhook))) w.own[i] = await subscribe(w.t, w.a.id)
}

const url = mostly(
  fc.oneof(fc.constantFrom(HOOK, 'https://[::1]:8443/x', 'http://localhost/cb', 'https://example.com/hook?x=1#frag'), fc.webUrl({ withQueryParameters: true })),
  fc.oneof(
    fc.constantFrom(
      'ftp://x/y',
      'http://user:pw@127.0.0.1/',
      'not a url',
      'http://',
      'http://%zz',
      'javascript:alert(1)',
      `https://${'a'.repeat(2040)}.io`,
      'http://[::1',
      'HTTP://127.0.0.1',
      'http://127.0.0.1:99999/',
      'file:///etc/passwd',
      '',
      ' http://127.0.0.1/ ',
      'http://0x7f.1/',
    ),
    fc.string({ maxLength: 40 }),
  ),
)
const EVENTS = ['reminder.triggered', 'session.drift_detected', 'session.loop_detected', 'session.stalled', 'webhook.test']
const eventTypes = fc.array(mostly(fc.constantFrom(...EVENTS), fc.constantFrom('reminder.*', '', 'nope', 'REMINDER.TRIGGERED')), { maxLength: 11 })
const createBody = withJunkField(fc.record({ url, event_types: eventTypes, description: text(500) }, { requiredKeys: ['url'] }))
const patchBody = withJunkField(
  fc.record(
    { url, event_types: eventTypes, description: mostly(text(500), fc.constant(null)), status: mostly(fc.constantFrom('active', 'disabled'), fc.constantFrom('paused', '')) },
    { requiredKeys: [] },
  ),
)
const FIELDS = ['url', 'event_types', 'description', 'status']
const body = (nearValid: fc.Arbitrary<unknown>) => rawBody(fc.oneof({ arbitrary: nearValid, weight: 4 }, junkBody(FIELDS)))

function routes(w: World): FuzzRoute[] {
  const page = { limit: fc.constantFrom('1', '2', '50', '200'), cursor: fc.constantFrom(...w.own.map((f) => f.webhook), w.foreign.webhook, 'whk_0', 'att_0', 'zzz') }
  return [
    { method: 'POST', path: '/v1/webhooks', body: body(createBody) },
    { method: 'GET', path: '/v1/webhooks', query: page },
    { method: 'GET', path: '/v1/webhooks/{id}' },
    { method: 'PATCH', path: '/v1/webhooks/{id}', body: body(patchBody) },
    { method: 'DELETE', path: '/v1/webhooks/{id}' },
    { method: 'POST', path: '/v1/webhooks/{id}/rotate-secret' },
    { method: 'POST', path: '/v1/webhooks/{id}/test' },
    { method: 'GET', path: '/v1/webhooks/{id}/deliveries', query: page },
    { method: 'POST', path: '/v1/webhooks/{id}/deliveries/{message_id}/retry' },
  ]
}

it('random webhook requests never cause a 5xx, and a rejected one changes no stored data', async () => {
  const w = await world()
  const rejected = await fuzzRoutes(w.t, {
    routes: routes(w),
    ids: {
      id: { prefix: 'whk', known: () => [...w.own.map((f) => f.webhook), w.foreign.webhook] },
      message_id: { prefix: 'msg', known: () => [...w.own.map((f) => f.message), w.foreign.message] },
    },
    authorization: authorization(w.a.apiKey, w.t.adminToken),
    foreign: () => [w.foreign.webhook, w.foreign.message],
    after: () => refresh(w),
    numRuns: 400,
    // Found on PostgreSQL: a NUL character in a stored text was a 500.
    examples: [{ method: 'POST', path: '/v1/webhooks', body: JSON.stringify({ url: HOOK, description: 'a\u0000b' }), authorization: `Bearer ${w.a.apiKey}` }],
  })
  expect(rejected).toBeGreaterThan(120)
  // 3–8 s alone; past the default 20 s beside the rest of the suite on two busy cores.
}, 60_000)

const typed = (w: World): TypedTemplate[] => [
  { method: 'POST', url: '/v1/webhooks', payload: { url: HOOK, event_types: ['reminder.triggered', 'webhook.test'], description: 'main' } },
  { method: 'PATCH', url: `/v1/webhooks/${w.own[0]!.webhook}`, payload: { url: HOOK, event_types: ['session.stalled'], description: 'ops', status: 'disabled' } },
]

it('every typed webhook template is accepted as is', async () => {
  const w = await world()
  await expectTemplatesAccepted(w.t, typed(w), w.a.headers)
})

it('a wrongly typed scalar anywhere in a webhook body is a 400 and changes no stored data', async () => {
  const w = await world()
  await fuzzWrongTypes(w.t, typed(w), w.a.headers, { numRuns: 100 })
})
