import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'
import type { DbHandle } from '../../src/db/client.js'
import type { App } from '../../src/http/app.js'
import { Receiver } from '../webhooks/receiver.js'
import { CHROMIUM, HOW_TO_ENABLE, removeUi, seedDriftedSession, SKIP_BROWSER, startUiApp, type Seeded } from './fixtures.js'

/** Git-ignored (.gitignore): what the pages looked like in the last run. */
const SHOTS = new URL('./screenshots/', import.meta.url).pathname

if (SKIP_BROWSER) console.warn(HOW_TO_ENABLE)

describe.skipIf(SKIP_BROWSER)('dashboard in a real browser', () => {
  let app: App
  let handle: DbHandle
  let apiKey: string
  let base: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let seeded: Seeded
  let rx: Receiver
  const problems: string[] = []

  // A failed set-up (no browser under CI=true) must fail every test, not leave them skipped as a
  // failing beforeAll does: it is kept and thrown before each test.
  let setupError: unknown
  let hookSessionId = ''
  beforeAll(async () => {
    try {
      await setUp()
    } catch (err) {
      setupError = err
    }
  })
  beforeEach(() => {
    if (setupError !== undefined) throw setupError
  })
  const setUp = async () => {
    const started = await startUiApp({ GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' })
    ;({ app, handle, base, apiKey } = started)
    seeded = await seedDriftedSession(app, started.agentId)
    await api('POST', '/v1/hooks/claude-code', { hook_event_name: 'UserPromptSubmit', session_id: 'cc-dashboard-1', prompt: 'Fix the flaky date test' })
    hookSessionId = (await api('GET', '/v1/sessions?external_id=cc-dashboard-1')).items[0].id
    mkdirSync(SHOTS, { recursive: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    // A CSP refusal or an uncaught error anywhere fails the run (checked in the last test).
    page.on('console', (m) => /Content.Security.Policy/i.test(m.text()) && problems.push(m.text()))
    page.on('pageerror', (e) => problems.push(e.message))
    rx = await new Receiver().start()
  }
  afterAll(async () => {
    await browser?.close()
    await rx?.stop()
    await app?.close()
    removeUi()
  })

  const api = async (method: string, url: string, payload?: object) =>
    (await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${apiKey}` }, ...(payload ? { payload } : {}) })).json()

  it('refuses a wrong key and says so, then signs in with the right one', async () => {
    await page.goto(`${base}/ui`)
    await page.fill('#api-key', 'gk_not_a_real_key')
    await page.click('button[type=submit]')
    await expect.poll(() => page.textContent('.sign-in .error')).toMatch(/not accepted \(401\)/)
    expect(await page.evaluate('sessionStorage.length')).toBe(0)

    await page.fill('#api-key', apiKey)
    await page.click('button[type=submit]')
    await page.waitForSelector(`tr[data-session="${seeded.sessionId}"]`)
    expect(await page.evaluate("sessionStorage.getItem('goalkeeper.api_key')")).toBe(apiKey)
    expect(await context.cookies()).toEqual([])
    const spark = await page.getAttribute(`tr[data-session="${seeded.sessionId}"] canvas.sparkline`, 'data-points')
    expect(Number(spark)).toBe(seeded.steps.length)
    // A session a coding agent's hooks opened shows where it came from and its id there.
    expect(await page.textContent(`tr[data-session="${hookSessionId}"] .id`)).toBe(`${hookSessionId} · claude-code cc-dashboard-1`)
    await page.screenshot({ path: `${SHOTS}sessions.png` })
  })

  it('draws the drifted session: one point per step, the loop marker where the loop was detected', async () => {
    await page.click(`tr[data-session="${seeded.sessionId}"] a`)
    await page.waitForSelector('.chart[data-points]')
    expect(page.url()).toBe(`${base}/ui/sessions/${seeded.sessionId}`)
    expect(Number(await page.getAttribute('.chart', 'data-points'))).toBe(seeded.steps.length)

    const loopSteps = seeded.steps.filter((s) => s.verification.reasoning.includes('loop:')).map((s) => s.step_number)
    expect(loopSteps.length).toBeGreaterThan(0)
    const first = seeded.steps.find((s) => s.state.loop_detected)!.step_number
    expect(loopSteps[0]).toBe(first)
    const drawn = await page.$$eval('.chart .marker-loop', (els) => els.map((e) => Number(e.getAttribute('data-step'))))
    expect(drawn).toEqual(loopSteps)
    expect(await page.$$('.chart .marker-drift')).not.toHaveLength(0)
    expect(await page.$$('.chart .marker-replan')).not.toHaveLength(0)
    await expect.poll(async () => (await page.$$('table.steps tbody tr')).length).toBe(seeded.steps.length)
    expect(await page.textContent('.reminder-text')).toContain('rate limiting')
    await page.screenshot({ path: `${SHOTS}session.png`, fullPage: true })
  })

  it('refreshes by itself: a step recorded while the page is open appears', async () => {
    await api('POST', `/v1/sessions/${seeded.sessionId}/steps`, { description: 'Documented the rate limit in the API reference', output: 'Docs updated' })
    const expected = String(seeded.steps.length + 1)
    // No waitForFunction: its string form is an eval, which the page's CSP refuses.
    await expect.poll(() => page.getAttribute('.chart', 'data-points'), { timeout: 10_000 }).toBe(expected)
    expect(await page.textContent('[data-stat=steps]')).toBe(expected)
  })

  it('snoozes a reminder from its row and shows the new state', async () => {
    const at = new Date(Date.now() + 30 * 60_000).toISOString()
    const created = await api('POST', '/v1/reminders', { title: 'Check the limiter dashboards', trigger: { type: 'scheduled', at } })
    await api('POST', '/v1/reminders', { title: 'Weekly review', trigger: { type: 'recurring', cron: '0 9 * * 1' }, priority: 'low' })
    await page.click('a[href="/ui/reminders"]')
    const row = `tr[data-reminder="${created.id}"]`
    await page.waitForSelector(row)
    expect(await page.getAttribute(`${row} [data-status]`, 'data-status')).toBe('pending')
    await page.selectOption(`${row} select`, '60')
    await page.click(`${row} button:has-text("Snooze")`)
    await page.waitForSelector(`${row} [data-status="snoozed"]`)
    const after = await api('GET', `/v1/reminders/${created.id}`)
    expect(after.status).toBe('snoozed')
    expect(await page.textContent(`${row} td:nth-child(2)`)).toContain('until')
    await page.screenshot({ path: `${SHOTS}reminders.png` })

    await page.fill('input[name=q]', 'weekly')
    await page.click('button:has-text("Search")')
    await expect.poll(async () => (await page.$$('table.reminders tbody tr')).length).toBe(1)
    expect(await page.textContent('table.reminders tbody')).toContain('Weekly review')
  })

  it('lists webhook deliveries with each attempt and redelivers one', async () => {
    rx.responder = (n, res) => {
      res.statusCode = n === 0 ? 500 : 204
      res.end()
    }
    const hook = await api('POST', '/v1/webhooks', { url: rx.url, description: 'Team chat relay' })
    const test = await api('POST', `/v1/webhooks/${hook.id}/test`)
    const dispatcher = new Dispatcher({ db: handle.db, settings: { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }, clock: Date.now })
    await dispatcher.runDue()
    await page.click('a[href="/ui/webhooks"]')
    const message = `tr[data-message="${test.message_id}"]`
    await page.waitForSelector(message)
    expect(await page.textContent(`${message} .attempts`)).toMatch(/#1 500 · \d+ ms/)

    await page.click(`${message} button:has-text("Redeliver")`)
    await page.waitForSelector(`article[data-webhook="${hook.id}"] .note`)
    await dispatcher.runDue()
    await dispatcher.stop()
    await expect.poll(() => page.textContent(`${message} .attempts`), { timeout: 10_000 }).toMatch(/#2 204 · \d+ ms/)
    await page.screenshot({ path: `${SHOTS}webhooks.png` })
  })

  it('ran without a CSP refusal or a script error', () => {
    expect(problems).toEqual([])
  })
})
