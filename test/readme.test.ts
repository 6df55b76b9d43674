/**
 * The README's examples, run as a reader would: the server started the way its `server` block
 * says (in process, on a free port and a temp database), then every ```sh block in order with
 * bash and curl, each checked for its exit status, the HTTP status of each curl call and a key
 * fact of its output. Blocks marked `<!-- readme-test: skip, <reason> -->` are the only ones not run.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { EnvSchema } from '../src/config.js'
import { Sqlite } from '../src/db/sqlite-driver.js'
import type { App } from '../src/http/app.js'
import { start } from '../src/server.js'
import { freePort } from './free-port.js'
import { BlockShell, fencedBlocks, type BlockRun } from './readme-blocks.js'

const ROOT = resolve(import.meta.dirname, '..')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const blocks = fencedBlocks(README)
const shBlocks = blocks.filter((b) => b.lang === 'sh')
const runBlocks = shBlocks.filter((b) => b.marker === undefined)

/** One check per run block, in README order; `starts` is the block's first line, to catch a README edit. */
const checks: { starts: string; check: (r: BlockRun) => void }[] = [
  {
    starts: 'B=http://',
    check: (r) => {
      expect(r.statuses).toEqual([])
      expect(r.vars.K).toMatch(/^Authorization: Bearer gk_/)
    },
  },
  {
    starts: 'S=$(curl',
    check: (r) => {
      expect(r.statuses).toEqual([201, 201, 201, 200, 200])
      expect(r.vars.S).toMatch(/^ses_/)
      expect(r.stderr).toContain('"similarity":"enhanced"') // the session, shown by tee
      const [first, second, reminder, recitation] = r.bodies
      expect(first).toMatchObject({ step_number: 1, verification: { aligned: true, recommended_action: 'continue' }, drift: { severity: 'none' } })
      expect(second).toMatchObject({ step_number: 2, verification: { aligned: false, recommended_action: 'adjust' }, drift: { severity: 'low' } })
      expect(reminder).toMatchObject({
        mode: 'full',
        includes_drift_warning: true,
        text: expect.stringContaining('[GOAL: Build a REST API for user management] [PROGRESS: 1/3 - 33% complete] [FOCUS: auth endpoints]'),
      })
      expect(recitation).toMatchObject({
        should_inject: true,
        text: expect.stringMatching(/^\[Current Status - Iteration 5\]\n\*\*Goal\*\*: Build a REST API for user management\n/),
      })
    },
  },
  {
    starts: 'AT=$(date',
    check: (r) => {
      expect(r.statuses).toEqual([201, 201, 201, 200])
      const at = Date.parse(r.vars.AT!)
      expect(at - Date.now()).toBeGreaterThan(8 * 60_000)
      expect(at - Date.now()).toBeLessThan(11 * 60_000)
      expect(r.vars.R).toMatch(/^rem_/)
      expect(r.bodies.at(-1)).toEqual({ items: [expect.objectContaining({ id: r.vars.R, title: 'Send the report' })], next_cursor: null })
    },
  },
  {
    starts: 'HOOK=$(curl',
    check: (r) => {
      expect(r.statuses).toEqual([201, 202, 200, 200])
      expect(r.vars.W).toMatch(/^whk_/)
      const { items } = r.bodies.at(-1) as { items: { event_type: string; status_code: number }[] }
      expect(items.map((d) => [d.event_type, d.status_code]).sort()).toEqual([
        ['reminder.triggered', 204],
        ['webhook.test', 204],
      ])
      // The receiver shares the block's stdout: it printed both, so both signatures verified.
      expect(r.stdout).toMatch(/^msg_\S+ webhook\.test \{/m)
      expect(r.stdout).toMatch(new RegExp(`^msg_\\S+ reminder\\.triggered \\{"reminder":\\{"id":"${r.vars.R}"`, 'm'))
    },
  },
  {
    starts: 'curl -s -H "$K" -H "$J" $B/turns',
    check: (r) => {
      expect(r.statuses).toEqual([200])
      expect(r.bodies[0]).toMatchObject({
        reminders: [expect.objectContaining({ title: 'Run the smoke tests' })],
        injection: { text: expect.stringMatching(/^\[GOAL: Build a REST API for user management\][^]*\n- \[normal\] "Run the smoke tests"$/) },
      })
    },
  },
  {
    starts: `curl -s -H "$K" -H "$J" $B/sessions -d '{"goal":5}'`,
    check: (r) => {
      expect(r.statuses).toEqual([400, 201, 201])
      expect(r.bodies[0]).toMatchObject({ status: 400, errors: [expect.objectContaining({ path: 'body/goal' })] })
      const [first, second] = r.bodies.slice(1)
      expect(first).toMatchObject({ step_number: 3 })
      expect(second).toEqual(first)
      expect(r.stdout.match(/^idempotent-replayed: true/gim)).toHaveLength(1)
    },
  },
  {
    starts: 'curl -s http://127.0.0.1:8080/healthz',
    check: (r) => {
      expect(r.statuses).toEqual([200, 200, 200])
      expect(r.bodies.slice(0, 2)).toEqual([{ status: 'ok' }, { status: 'ready', checks: { database: true, migrations: true } }])
      expect(r.stdout).toMatch(/^goalkeeper_step_verdicts_total\{action="continue"\} [1-9]/m)
      expect(r.stdout).toContain('backup written')
    },
  },
]

describe('README examples', () => {
  let work: string
  let app: App
  let key: string
  let shell: BlockShell
  let base: string
  let receiverPort: number

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'goalkeeper-readme-'))
    // The reader runs the commands in the repository folder: node modules and the example receiver.
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'))
    symlinkSync(join(ROOT, 'examples'), join(work, 'examples'))
    receiverPort = await freePort()

    const server = blocks.filter((b) => b.marker === 'server')
    expect(server).toHaveLength(1)
    const command = /^((?:[A-Z_]+=\S+ )*)npm start$/.exec(server[0]!.code.trim())
    expect(command, 'the server block is `VAR=value … npm start`').not.toBeNull()
    const env = Object.fromEntries(
      command![1]!
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    )

    const printed: string[] = []
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk))
      return true
    })
    try {
      app = await start({ ...env, HOST: '127.0.0.1', PORT: '0', GOALKEEPER_DB: join(work, 'goalkeeper.db'), LOG_LEVEL: 'silent' })
    } finally {
      write.mockRestore()
    }
    // The line the README shows, with its elisions filled in.
    const shown = /`(goalkeeper: created bootstrap agent agt_….*gk_…)`/.exec(README)?.[1]
    expect(shown).toBeDefined()
    const pattern = new RegExp(shown!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '([A-Za-z0-9_-]+)'))
    const line = printed
      .join('')
      .split('\n')
      .find((l) => pattern.test(l))
    expect(line, `printed: ${printed.join('')}`).toBeDefined()
    key = `gk_${pattern.exec(line!)![2]!}`
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    shell = new BlockShell(work, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      GOALKEEPER_DB: join(work, 'goalkeeper.db'),
      RECEIVER_PORT: String(receiverPort),
    })
  })

  afterAll(async () => {
    for (const pid of shell?.background ?? []) {
      try {
        process.kill(pid)
      } catch {
        // already gone
      }
    }
    await app?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('marks every shell block it does not run, with a reason', () => {
    const marked = shBlocks.filter((b) => b.marker !== undefined)
    for (const b of marked) expect(b.marker, `line ${b.line}`).toMatch(/^(server|skip, .+)$/)
    expect(marked.filter((b) => b.marker!.startsWith('skip'))).toHaveLength(1)
    expect(runBlocks).toHaveLength(checks.length)
    runBlocks.forEach((b, i) => expect(b.code.startsWith(checks[i]!.starts), `block at line ${b.line} vs check ${i}`).toBe(true))
  })

  runBlocks.forEach((block, i) => {
    it(`runs the block at line ${block.line}: ${block.code.split('\n')[0]!.slice(0, 60)}`, async () => {
      const code = block.code.replaceAll('http://127.0.0.1:8080', base).replaceAll('gk_…', key).replaceAll('127.0.0.1:9000', `127.0.0.1:${receiverPort}`)
      const run = await shell.run(code)
      expect(run.code, `exit status; stderr:\n${run.stderr}`).toBe(0)
      checks[i]!.check(run)
    })
  })

  it('leaves a backup that opens as the same database', () => {
    const backup = new Sqlite(join(work, 'goalkeeper-backup.db'), { readonly: true })
    try {
      expect(backup.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 1 })
    } finally {
      backup.close()
    }
  })
})

describe('README and docs', () => {
  it("list every environment variable the server reads in the reference's configuration table, and no other; the README's table repeats some of its rows", () => {
    const rows = (text: string) => text.split('\n').filter((l) => /^\| `/.test(l))
    const reference = rows(readFileSync(join(ROOT, 'docs/reference.md'), 'utf8'))
    const named = reference.flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!))
    expect(named.sort()).toEqual(Object.keys(EnvSchema.properties).sort())
    // A README row names a variable and its default as the reference does (their links differ).
    const cells = (row: string) => row.split('|').slice(1, 3).join('|')
    const readme = rows(README).map(cells)
    expect(readme.length).toBeGreaterThan(0)
    for (const row of readme) expect(reference.map(cells)).toContain(row)
  })

  it('name only files and folders the repository has', () => {
    const docs = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ]
    expect(docs).toContain('docs/decisions/README.md')
    const missing: string[] = []
    for (const doc of docs) {
      const text = readFileSync(join(ROOT, doc), 'utf8')
      const dir = dirname(join(ROOT, doc))
      // Relative links, and code spans that look like repository paths.
      const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l))
      for (const l of links) if (!existsSync(join(dir, l))) missing.push(`${doc}: (${l})`)
      const spans = [...text.matchAll(/`((?:src|test|bench|scripts|docs|examples|resources|migrations)\/[^`\s]*)`/g)].map((m) => m[1]!)
      for (const p of spans) if (!pathExists(p)) missing.push(`${doc}: \`${p}\``)
    }
    expect(missing).toEqual([])
  })
})

/** A repository path, or a `*` pattern in its last segment that matches at least one file. */
function pathExists(path: string): boolean {
  const slash = path.lastIndexOf('/')
  const [dir, name] = [join(ROOT, path.slice(0, slash)), path.slice(slash + 1)]
  if (!name.includes('*')) return existsSync(join(ROOT, path))
  const pattern = new RegExp(
    `^${name
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
  return existsSync(dir) && readdirSync(dir).some((f) => pattern.test(f))
}
