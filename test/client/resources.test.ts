/** Reminders, turns, settings and webhooks through the client, and a real signed delivery verified with it. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { GoalkeeperError, verifyWebhook, WebhookVerificationError } from '@goalkeeper/client'
import { wallClock } from '../../src/engine/clock.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'
import { GOAL, liveServer } from './live-server.js'

describe('reminders, turns and settings', () => {
  it('creates, finds, fires and completes a reminder, and a turn delivers it', async () => {
    const { client } = await liveServer()
    await client.settings.update({ timezone: 'Europe/Berlin' })
    expect((await client.settings.get()).timezone).toBe('Europe/Berlin')
    const session = await client.sessions.create({ goal: GOAL })
    const reminder = await client.reminders.create({ title: 'Run the smoke tests', trigger: { type: 'context', pattern: 'deploy' }, session_id: session.id })
    expect(reminder.id).toMatch(/^rem_/)
    expect((await client.reminders.search({ q: 'smoke tests' })).items[0]?.reminder.id).toBe(reminder.id)
    expect((await client.reminders.list({ trigger_type: 'context' })).items).toHaveLength(1)
    const turn = await client.turns.start({ user_message: 'time to deploy', session_id: session.id })
    expect(turn.reminders.map((r) => r.id)).toEqual([reminder.id])
    expect(turn.injection.text).toContain('Run the smoke tests')
    expect((await client.reminders.complete(reminder.id)).status).toBe('completed')
    await client.reminders.delete(reminder.id)
    await expect(client.reminders.get(reminder.id)).rejects.toMatchObject({ status: 404 })
  })

  it("reports a session's tools, and a step calling another names it", async () => {
    const { client } = await liveServer()
    const session = await client.sessions.create({ goal: GOAL })
    expect(await client.sessions.setTools(session.id, ['Read', 'Edit', 'Bash'])).toEqual({ tools: ['Read', 'Edit', 'Bash'] })
    const step = await client.sessions.step(session.id, { description: 'read the limiter', tool: { name: 'ReadFile', args: { path: 'src/limiter.ts' } } })
    expect(step.verification.unknown_tool).toEqual({ name: 'ReadFile', similar: ['Read'], count: 1 })
  })

  it('passes a 422 through with its problem fields', async () => {
    const { client } = await liveServer()
    const err = await client.reminders.create({ title: 'never', trigger: { type: 'recurring', cron: '0 0 31 2 *' } }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GoalkeeperError)
    expect(err).toMatchObject({ status: 422 })
  })
})

describe('webhooks', () => {
  it('registers an endpoint, and a delivery to it verifies with the secret (a tampered one does not)', async () => {
    const received: { body: string; headers: Record<string, string | string[] | undefined> }[] = []
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c))
      req.on('end', () => {
        received.push({ body, headers: req.headers })
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    try {
      const { client, t } = await liveServer({ env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const hook = await client.webhooks.create({ url, event_types: ['webhook.test'] })
      expect(hook.secret).toMatch(/^whsec_/)
      await client.webhooks.test(hook.id)
      const dispatcher = new Dispatcher({ db: t.handle.db, settings: { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }, clock: wallClock })
      await dispatcher.runDue()
      await dispatcher.stop(1000)

      expect(received).toHaveLength(1)
      const { body, headers } = received[0]!
      const event = verifyWebhook(hook.secret, body, headers)
      expect(event.type).toBe('webhook.test')
      expect(client.webhooks.verify(hook.secret, Buffer.from(body), new Headers(headers as Record<string, string>))).toEqual(event)
      expect(() => verifyWebhook(hook.secret, body.replace('webhook.test', 'webhook.tost'), headers)).toThrow(WebhookVerificationError)
      const { secret } = await client.webhooks.rotateSecret(hook.id)
      expect(() => verifyWebhook(secret, body, headers)).toThrow(WebhookVerificationError)

      const deliveries = await client.webhooks.deliveries(hook.id)
      expect(deliveries.items[0]).toMatchObject({ event_type: 'webhook.test', status_code: 204, attempt: 1 })
    } finally {
      receiver.closeAllConnections()
      await new Promise((resolve) => receiver.close(resolve))
    }
  })
})
