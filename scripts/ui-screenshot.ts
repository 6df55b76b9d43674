/**
 * Writes docs/session-page.png, the README's picture of the dashboard: the session page of the
 * browser tests' drifted session (test/ui/fixtures.ts), top part, in headless Chromium.
 * Usage: npx tsx scripts/ui-screenshot.ts [out.png]
 */
import { chromium } from 'playwright-core'
import { CHROMIUM, removeUi, seedDriftedSession, startUiApp } from '../test/ui/fixtures.js'

const out = process.argv[2] ?? new URL('../docs/session-page.png', import.meta.url).pathname
const { app, base, agentId, apiKey } = await startUiApp()
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
try {
  const { sessionId } = await seedDriftedSession(app, agentId)
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 })
  await context.addInitScript(`sessionStorage.setItem('goalkeeper.api_key', ${JSON.stringify(apiKey)})`)
  const page = await context.newPage()
  await page.goto(`${base}/ui/sessions/${sessionId}`)
  await page.waitForSelector('.chart[data-points]')
  await page.screenshot({ path: out })
  console.log(`wrote ${out}`)
} finally {
  await browser.close()
  await app.close()
  removeUi()
}
