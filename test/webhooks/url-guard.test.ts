import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { assertWebhookUrl, isForbiddenAddress } from '../../src/webhooks/url-guard.js'
import { setup } from './fixtures.js'
import { Receiver } from './receiver.js'

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    'not-an-ip',
  ])('refuses %s', (ip) => expect(isForbiddenAddress(ip)).toBe(true))

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) => expect(isForbiddenAddress(ip)).toBe(false))
})

async function status(url: string, allow = false): Promise<number> {
  try {
    await assertWebhookUrl(url, allow)
    return 200
  } catch (e) {
    return (e as AppError).status
  }
}

describe('assertWebhookUrl', () => {
  it('refuses loopback, private and mapped targets with 422, including a name resolving to 127.0.0.1', async () => {
    for (const u of [
      'http://127.0.0.1:8080/hook',
      'http://localhost:8080/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.0.0.7/hook',
      'http://169.254.169.254/latest/meta-data',
      'https://user:pw@example.com/hook',
    ]) {
      expect([u, await status(u)]).toEqual([u, 422])
    }
  })

  it('refuses what is no absolute http(s) URL with 400 at body/url, private targets allowed or not', async () => {
    for (const allow of [false, true]) {
      for (const u of ['ftp://example.com/hook', 'not a url', '/hook', 'example.com/hook', 'javascript:alert(1)', 'http://', 'http://%zz']) {
        const err = await assertWebhookUrl(u, allow).then(
          () => undefined,
          (e: unknown) => e as AppError,
        )
        expect([u, err?.status, err?.errors]).toEqual([u, 400, [{ path: 'body/url', message: 'must be an absolute http or https URL' }]])
      }
    }
  })

  it('accepts a public literal, and private targets when allowed', async () => {
    expect(await status('https://8.8.8.8/hook')).toBe(200)
    expect(await status('http://localhost:8080/hook', true)).toBe(200)
    expect(await status('https://user:pw@localhost/hook', true)).toBe(422)
  })
})

describe('delivery-time guard', () => {
  let rx: Receiver
  beforeEach(async () => {
    rx = await new Receiver().start()
  })
  afterEach(async () => rx.stop())

  for (const host of ['localhost', '127.0.0.1']) {
    it(`refuses to connect to ${host} when private targets are not allowed (stored URL, rebinding)`, async () => {
      const env = await setup({ allowPrivateUrls: false })
      // Stored directly, as if the name had resolved publicly at create time and was rebound since.
      await env.db.run("INSERT INTO webhooks (id, agent_id, url, secret, created_at, updated_at) VALUES ('whk_x', 'agt_a', ?, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 0, 0)", [
        `http://${host}:${rx.port}/hook`,
      ])
      await env.outbox.enqueue('agt_a', 'webhook.test', {}, env.clock.now)
      await env.dispatcher.runDue()
      expect(rx.received).toHaveLength(0)
      const a = (await env.db.get<{ error: string }>('SELECT status_code, error FROM webhook_attempts'))!
      expect(a.error).toMatch(/refused non-public address 127\.0\.0\.1/)
      await env.close()
    })
  }
})
