import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { buildApp, type App } from '../../src/http/app.js'

/** The Chromium the browser tests drive (Debian's package); GOALKEEPER_CHROMIUM overrides. */
export const CHROMIUM = process.env.GOALKEEPER_CHROMIUM ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
/** Under CI the browser tests never skip: a missing browser fails them. */
export const SKIP_BROWSER = !HAVE_CHROMIUM && process.env.CI !== 'true'
export const HOW_TO_ENABLE = `browser tests skipped: no Chromium at ${CHROMIUM} (install it with \`apt-get install chromium\`, or set GOALKEEPER_CHROMIUM to a Chromium binary)`

let built: string | undefined
/** Builds the dashboard once per test file into a temporary directory (ui/build.mjs); `removeUi` deletes it. */
export function buildUi(): string {
  if (built !== undefined) return built
  const out = mkdtempSync(join(tmpdir(), 'goalkeeper-ui-'))
  execFileSync(process.execPath, [new URL('../../ui/build.mjs', import.meta.url).pathname, out], { stdio: 'inherit' })
  return (built = out)
}

export function removeUi(): void {
  if (built !== undefined) rmSync(built, { recursive: true, force: true })
  built = undefined
}

/**
 * An app on a migrated :memory: database serving a fresh dashboard build, listening on
 * 127.0.0.1:0, with one agent. Not test/helpers' buildTestApp: that closes its apps after each
 * test, and a browser suite keeps one app for all of them. Close it with `app.close()`.
 */
export async function startUiApp(env: Record<string, string> = {}): Promise<{ app: App; handle: DbHandle; base: string; agentId: string; apiKey: string }> {
  const config = loadConfig({ GOALKEEPER_DB: ':memory:', GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', ...env })
  const handle = openDb(config.dbPath)
  runMigrations(handle)
  const app = await buildApp({ config, handle, logger: false, uiRoot: buildUi(), closeHandleOnClose: true })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { id, api_key } = await app.services.agents.create('ui')
  return { app, handle, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, agentId: id, apiKey: api_key }
}

export const GOAL = 'Add per-key rate limiting to the search API'
export const PLAN = [
  'Measure current request rates per API key',
  'Add a token bucket limiter middleware keyed by API key',
  'Return 429 with a Retry-After header',
  'Document the limit in the API reference',
]
const ON_GOAL = [
  { description: 'Measured request rates per API key from the search API access logs', output: 'Peak 340 requests per minute from one key' },
  { description: 'Added a token bucket rate limiter middleware keyed by API key', output: 'Limiter in front of the search handlers' },
]
const OFF_GOAL = [
  'Restyled the marketing landing page hero banner',
  'Rewrote the footer copy of the company blog',
  'Tweaked CSS gradients on the pricing page',
  'Chose new display fonts for the newsletter',
]
const LOOPED = { description: 'Restyled the marketing landing page hero banner', output: 'Hero banner colours changed' }
const RECOVERY = { description: 'Returned 429 with a Retry-After header when the search API rate limit is exceeded', output: 'Tests pass' }

export interface Seeded {
  sessionId: string
  /** Step numbers whose verdict reported a loop (state.loop_detected turned on or stayed on with the loop note). */
  steps: { step_number: number; state: { loop_detected: boolean; stall_turns: number }; verification: { reasoning: string } }[]
}

/** A session whose agent starts on goal, drifts off, loops on one step and comes back. */
export async function seedDriftedSession(app: App, agentId: string): Promise<Seeded> {
  const session = await app.services.sessions.create(agentId, { goal: GOAL, plan: PLAN })
  const steps: Seeded['steps'] = []
  const step = async (s: { description: string; output?: string }) => {
    const r = await app.services.sessions.step(agentId, session.id, s)
    steps.push({ step_number: r.step_number, state: r.state, verification: r.verification })
  }
  for (const s of ON_GOAL) await step(s)
  for (const d of OFF_GOAL) await step({ description: d, output: 'Done' })
  for (let i = 0; i < 3; i++) await step(LOOPED)
  await step(RECOVERY)
  return { sessionId: session.id, steps }
}

/** A session of `count` steps alternating between on- and off-goal work (the bench's long session). */
export async function seedLongSession(app: App, agentId: string, count: number): Promise<string> {
  const session = await app.services.sessions.create(agentId, { goal: GOAL, plan: PLAN })
  for (let i = 0; i < count; i++) {
    const base = i % 7 < 4 ? ON_GOAL[i % 2]!.description : OFF_GOAL[i % OFF_GOAL.length]!
    await app.services.sessions.step(agentId, session.id, { description: `${base} (pass ${i})`, output: `Result of step ${i + 1}` })
  }
  return session.id
}
