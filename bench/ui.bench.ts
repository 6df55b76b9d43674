/**
 * First load of the dashboard's session page (`npm run bench:ui`): a session of 500 steps, opened
 * cold (new browser context, empty cache, key already in sessionStorage) in headless Chromium.
 * Time to chart drawn is measured in the browser: the `gk:chart-drawn` performance mark the chart
 * leaves when it has drawn every step (ui/src/similarity-chart.ts), in ms since navigation start.
 * Also prints when the script started and when the data had arrived (marks gk:boot and
 * gk:session-loaded), and the bytes transferred: the UI itself (HTML, JS, CSS, as sent: brotli) and the API
 * calls the page made, from the browser's resource timing.
 *
 * Flags: --steps N (500), --runs N (7). Needs Chromium (GOALKEEPER_CHROMIUM, default /usr/bin/chromium).
 * The server runs in this process (built app, real listener on 127.0.0.1, :memory: database).
 */
import { loadavg } from 'node:os'
import { chromium } from 'playwright-core'
import { CHROMIUM, removeUi, seedLongSession, startUiApp } from '../test/ui/fixtures.js'
import { flag } from './load.js'

const steps = flag('steps', 500)
const runs = flag('runs', 7)

interface Load {
  drawnMs: number
  /** The bundle started running. */
  bootMs: number
  /** The session, its steps and the next turn had all arrived. */
  loadedMs: number
  uiBytes: number
  uiDecoded: number
  apiBytes: number
  apiCalls: number
}

// Evaluated in the page as strings (the bench's tsconfig has no DOM types).
const MEASURE = `(() => {
  const mark = performance.getEntriesByName('gk:chart-drawn').find((m) => m.detail && m.detail.points === ${steps})
  const nav = performance.getEntriesByType('navigation')[0]
  const res = performance.getEntriesByType('resource')
  const ui = res.filter((r) => new URL(r.name).pathname.startsWith('/ui/'))
  const api = res.filter((r) => new URL(r.name).pathname.startsWith('/v1/'))
  const sum = (list, key) => list.reduce((n, r) => n + r[key], 0)
  return {
    drawnMs: mark ? mark.startTime : NaN,
    bootMs: performance.getEntriesByName('gk:boot')[0]?.startTime ?? NaN,
    loadedMs: performance.getEntriesByName('gk:session-loaded')[0]?.startTime ?? NaN,
    uiBytes: nav.transferSize + sum(ui, 'transferSize'),
    uiDecoded: nav.decodedBodySize + sum(ui, 'decodedBodySize'),
    apiBytes: sum(api, 'transferSize'),
    apiCalls: api.length,
  }
})()`

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

async function main(): Promise<void> {
  console.log(
    `UI bench: first load of /ui/sessions/{id} with ${steps} steps, ${runs} cold runs; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  const { app, base, agentId, apiKey } = await startUiApp()
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  try {
    const sessionId = await seedLongSession(app, agentId, steps)
    const loads: Load[] = []
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      await context.addInitScript(`sessionStorage.setItem('goalkeeper.api_key', ${JSON.stringify(apiKey)})`)
      const page = await context.newPage()
      await page.goto(`${base}/ui/sessions/${sessionId}`)
      await page.waitForSelector(`.chart[data-points="${steps}"]`, { timeout: 30_000 })
      loads.push((await page.evaluate(MEASURE)) as Load)
      await context.close()
    }
    const drawn = loads.map((l) => l.drawnMs)
    const first = loads[0]!
    console.log(`time to chart drawn: median ${median(drawn).toFixed(0)} ms (min ${Math.min(...drawn).toFixed(0)}, max ${Math.max(...drawn).toFixed(0)}; first run ${drawn[0]!.toFixed(0)} ms)`)
    console.log(`  of which: script running at ${median(loads.map((l) => l.bootMs)).toFixed(0)} ms, data arrived at ${median(loads.map((l) => l.loadedMs)).toFixed(0)} ms (medians)`)
    console.log(`UI transferred: ${kb(first.uiBytes)} (HTML + JS + CSS; ${kb(first.uiDecoded)} uncompressed)`)
    console.log(`API transferred: ${kb(first.apiBytes)} in ${first.apiCalls} calls (session, ${steps} steps, next turn)`)
  } finally {
    await browser.close()
    await app.close()
    removeUi()
  }
}

await main()
