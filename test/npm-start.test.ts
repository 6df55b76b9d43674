/**
 * `npm start` as a process manager and a user see it, in a copy of the project (its own dist/, so
 * no other test's build races it): the first start builds, a second one does not; SIGTERM to the
 * npm process and Ctrl-C (SIGINT to the process group) exit 0, free the port and leave no process
 * behind; the server runs with the start script's memory settings and stays up through 50
 * concurrent requests of the largest size and the overview after them.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startCommand, startEnvPairs } from '../bench/start-command.js'
// @ts-expect-error -- plain JavaScript (it runs before any build), without declarations
import { buildIsStale } from '../scripts/start.mjs'
import { freePort } from './free-port.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ADMIN = 'npm-start-admin-token-0123456789'
/** What npm prints when it runs the build script. */
const BUILD_LINE = /^> goalkeeper@\S+ build$/m
let copy: string

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'gk-npm-start-'))
  for (const f of ['src', 'ui', 'scripts', 'migrations', 'resources', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(ROOT, f), join(copy, f), { recursive: true })
  }
  mkdirSync(join(copy, 'client'))
  cpSync(join(ROOT, 'client', 'package.json'), join(copy, 'client', 'package.json'))
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'))
})
/** Process groups started here: whatever a failed test left in one is killed after it. */
const groups: number[] = []
afterEach(() => {
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      // the group is empty, as it should be
    }
  }
})
afterAll(() => rmSync(copy, { recursive: true, force: true }))

/**
 * The heap is capped at 192 MB (--max-old-space-size); code, buffers and SQLite's cache come on top.
 * Measured peaks under this burst: 247 MB on Node.js 20, 316–331 MB on 22 and 24 (a larger young
 * generation and code space), so the cap leaves room above the newer lines.
 */
const RSS_CAP_MB = 384

/**
 * The largest POST /v1/sessions body the schemas take, about 1 MB: a 4,000-character goal, 500
 * plan steps of 2,000 characters of distinct words, metadata at its key limit.
 */
function largestSession(k: number): string {
  let n = k * 7919
  const word = () => `w${((n = (n * 48271 + 11) % 2_147_483_647) % 50_000).toString(36)}`
  const text = (length: number) => {
    let out = ''
    while (out.length < length) out += `${word()} `
    return out.slice(0, length)
  }
  const metadata = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`key${i}`, text(12)]))
  return JSON.stringify({ goal: text(4000), plan: Array.from({ length: 500 }, () => text(2000)), metadata })
}

interface Started {
  npm: ChildProcess
  port: number
  base: string
  output: () => string
  exit: Promise<number | null>
}

/** `npm start` in its own process group (as a terminal runs it), ready once /healthz answers. */
async function npmStart(): Promise<Started> {
  const port = await freePort()
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    GOALKEEPER_DB: join(copy, 'data', 'gk.db'),
    GOALKEEPER_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
    GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
  }
  // Niced (nice execs npm, so the pid is npm's): its build and its 50 MB of requests yield the CPU
  // to the tests running beside it, whose timings this test must not push past their timeouts.
  const npm = spawn('nice', ['-n', '15', 'npm', 'start'], { cwd: copy, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  groups.push(npm.pid!)
  let output = ''
  npm.stdout!.on('data', (d: Buffer) => (output += d.toString()))
  npm.stderr!.on('data', (d: Buffer) => (output += d.toString()))
  // 'close', not 'exit': the last of its output may come after the process has exited.
  const exit = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)))
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break
    if (npm.exitCode !== null || i > 900) throw new Error(`npm start did not come up: ${output}`)
    await new Promise((r) => setTimeout(r, 200))
  }
  return { npm, port, base, output: () => output, exit }
}

/** The processes still in process group `pgid` (the one npm leads). */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        // Fields after the command's closing parenthesis: state, ppid, pgrp.
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid
      } catch {
        return false // gone meanwhile
      }
    })
    .map(Number)
}

async function expectStopped(s: Started, code: number | null): Promise<void> {
  expect(code, s.output()).toBe(0)
  // npm may exit a moment before the server it forwarded the signal to has finished closing (seen
  // once on Node.js 22): what must not happen is a process that stays.
  for (let i = 0; i < 50 && groupMembers(s.npm.pid!).length > 0; i++) await new Promise((r) => setTimeout(r, 100))
  expect(groupMembers(s.npm.pid!)).toEqual([])
  expect(
    await fetch(`${s.base}/healthz`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused')
}

describe('npm start', () => {
  it('builds on the first start; SIGTERM to npm exits 0 and frees the port, with no process left', { timeout: 300_000 }, async () => {
    const s = await npmStart()
    expect(s.output()).toMatch(BUILD_LINE)
    // The server runs with the start script's memory settings (exec env … node: npm's child is node).
    const args = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      } catch {
        return [] // gone meanwhile (what the build left)
      }
    }
    const server = groupMembers(s.npm.pid!).find((pid) => args(pid).includes('scripts/start.mjs'))!
    expect(args(server)).toEqual(expect.arrayContaining(startCommand().flags))
    expect(readFileSync(`/proc/${server}/environ`, 'utf8').split('\0')).toEqual(expect.arrayContaining(startEnvPairs()))
    process.kill(s.npm.pid!, 'SIGTERM')
    await expectStopped(s, await s.exit)
  })

  it('stays up through 50 concurrent requests of the largest size and the overview after them', { timeout: 180_000 }, async () => {
    const s = await npmStart()
    try {
      const server = groupMembers(s.npm.pid!).find((pid) => pid !== s.npm.pid)!
      let peakRss = 0
      const sampler = setInterval(() => {
        // A server that went down has no status file left: the checks below report its exit.
        try {
          const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server}/status`, 'utf8'))
          if (rss) peakRss = Math.max(peakRss, Number(rss[1]) / 1024)
        } catch {
          // gone
        }
      }, 50)
      const agent = (await (
        await fetch(`${s.base}/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"name":"load"}' })
      ).json()) as { api_key: string }
      const headers = { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json' }
      const bodies = Array.from({ length: 50 }, (_, k) => largestSession(k))
      expect(Math.min(...bodies.map((b) => Buffer.byteLength(b)))).toBeGreaterThan(1_000_000)
      const answers = await Promise.all(
        bodies.map(async (body) => {
          const res = await fetch(`${s.base}/v1/sessions`, { method: 'POST', headers, body })
          return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), body: await res.text() }
        }),
      )
      // Each is created, or turned away as the contract says when the process must shed load.
      for (const a of answers) {
        if (a.status === 201) continue
        expect([a.status, a.type, a.retryAfter], a.body.slice(0, 300)).toEqual([503, expect.stringContaining('application/problem+json'), expect.stringMatching(/^\d+$/)])
      }
      expect(answers.filter((a) => a.status === 201).length).toBeGreaterThan(0)
      for (let i = 0; i < 3; i++) {
        const overview = await fetch(`${s.base}/v1/sessions/overview`, { headers })
        expect(overview.status).toBe(200)
        expect(((await overview.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0)
      }
      clearInterval(sampler)
      expect(s.npm.exitCode).toBeNull()
      expect(peakRss).toBeGreaterThan(0)
      expect(peakRss, `peak RSS ${peakRss.toFixed(0)} MB`).toBeLessThan(RSS_CAP_MB)
      console.log(`npm start under 50 concurrent 1 MB creates: ${answers.filter((a) => a.status === 201).length} created, peak RSS ${peakRss.toFixed(0)} MB`)
    } finally {
      process.kill(s.npm.pid!, 'SIGTERM')
      await expectStopped(s, await s.exit)
    }
  })

  it('does not build again when nothing changed; Ctrl-C (SIGINT to the group) exits 0', { timeout: 120_000 }, async () => {
    const s = await npmStart()
    expect(s.output()).not.toMatch(BUILD_LINE)
    process.kill(-s.npm.pid!, 'SIGINT')
    await expectStopped(s, await s.exit)
  })
})

describe('buildIsStale', () => {
  it('is true without a build, false after one, true again once a source is newer', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-stale-'))
    try {
      mkdirSync(join(dir, 'src', 'http'), { recursive: true })
      writeFileSync(join(dir, 'src', 'http', 'app.ts'), '')
      expect(buildIsStale(dir)).toBe(true)
      mkdirSync(join(dir, 'dist', 'webui'), { recursive: true })
      writeFileSync(join(dir, 'dist', 'server.js'), '')
      expect(buildIsStale(dir)).toBe(true) // the dashboard is not built yet
      writeFileSync(join(dir, 'dist', 'webui', 'index.html'), '')
      const past = new Date(Date.now() - 60_000)
      utimesSync(join(dir, 'src', 'http', 'app.ts'), past, past)
      utimesSync(join(dir, 'src', 'http'), past, past)
      utimesSync(join(dir, 'src'), past, past)
      expect(buildIsStale(dir)).toBe(false)
      writeFileSync(join(dir, 'src', 'http', 'app.ts'), 'changed')
      expect(buildIsStale(dir)).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
