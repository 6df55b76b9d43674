import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../src/config.js'
import { start } from '../src/server.js'
import { openDatabase } from '../src/db/open.js'
import { isLoopback, StartupError, unreachableWarning } from '../src/startup.js'

const dirs: string[] = []
const servers: Server[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-startup-'))
  dirs.push(dir)
  return dir
}

/** A port something else already listens on. */
async function busyPort(): Promise<number> {
  const server = createServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Runs src/server.ts until it exits or prints `until` (then SIGTERM), SIGKILL after `killMs`.
 * `code` is null when it had to be killed.
 */
function runServer(env: Record<string, string>, until?: string, killMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', GOALKEEPER_ADMIN_TOKEN: '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let stopping = false
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
    // Once: a second SIGTERM (on the "shutting down" line, say) makes the server exit 1 at once.
    if (until && !stopping && stdout.includes(until)) {
      stopping = true
      child.kill('SIGTERM')
    }
  })
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), killMs)
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    }),
  )
}

const sqliteAt = (dbPath: string) => ({ dbPath, databaseUrl: undefined, statementTimeoutMs: 5000 })

describe('a bad GOALKEEPER_DB', () => {
  it.each([
    ['a directory', (dir: string) => dir, /: .+ is a directory$/],
    ['a path under a regular file', (dir: string) => (writeFileSync(join(dir, 'f'), 'x'), join(dir, 'f', 'g.db')), /: .+\/f is not a directory$/],
    ['a file that is not a database', (dir: string) => (writeFileSync(join(dir, 'g.db'), 'x'.repeat(4096)), join(dir, 'g.db')), /: file is not a database$/],
  ])('%s is refused in one line naming the variable, the path and the cause', async (_what, pathIn, cause) => {
    const path = pathIn(tempDir())
    const run = () => openDatabase(sqliteAt(path))
    await expect(run()).rejects.toThrow(StartupError)
    await expect(run()).rejects.toThrow(new RegExp(`^Cannot open the database: GOALKEEPER_DB=${path}`))
    await expect(run()).rejects.toThrow(cause)
  })

  it('names the resolved path when the configured one is relative', async () => {
    const sub = join(tempDir(), 'sub')
    mkdirSync(sub)
    const rel = relative(process.cwd(), sub)
    await expect(openDatabase(sqliteAt(rel))).rejects.toThrow(`GOALKEEPER_DB=${rel} (${sub}): ${sub} is a directory`)
  })

  it('still creates the missing folders of a good path', async () => {
    const path = join(tempDir(), 'a', 'b', 'g.db')
    await (await openDatabase(sqliteAt(path))).close()
    expect(existsSync(path)).toBe(true)
  })

  it('stops the process with exit code 1 and a single line on stderr', { timeout: 30_000 }, async () => {
    const dir = tempDir()
    const { code, stdout, stderr } = await runServer({ GOALKEEPER_DB: dir })
    expect(code).toBe(1)
    expect(stderr).toBe(`Cannot open the database: GOALKEEPER_DB=${dir}: ${dir} is a directory\n`)
    expect(stdout).not.toContain('gk_')
  })

  // Node's recursive mkdir retried forever here (100% CPU, SIGTERM ignored); procfs answers ENOENT.
  it.skipIf(!existsSync('/proc/self'))('exits at once for a folder that cannot be created under /proc', { timeout: 30_000 }, async () => {
    const { code, stderr } = await runServer({ GOALKEEPER_DB: '/proc/goalkeeper-nope/g.db' })
    expect(code).toBe(1)
    expect(stderr).toMatch(/^Cannot open the database: GOALKEEPER_DB=\/proc\/goalkeeper-nope\/g\.db: ENOENT.*\n$/)
  })
})

describe('a bad HOST or PORT', () => {
  it('a busy port is refused naming HOST and PORT; the key is printed on the next, successful start', async () => {
    const db = join(tempDir(), 'gk.db')
    const out: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk))
      return true
    })
    const port = await busyPort()
    const env = { GOALKEEPER_DB: db, LOG_LEVEL: 'silent' }
    const failed = start({ ...env, PORT: String(port) })
    await expect(failed).rejects.toThrow(StartupError)
    await expect(failed).rejects.toThrow(`Cannot listen on HOST=127.0.0.1 PORT=${port}: the port is already in use (EADDRINUSE)`)
    expect(out.join('')).not.toContain('gk_')

    const app = await start({ ...env, PORT: '0' })
    const key = /API key \(shown once\): (gk_[A-Za-z0-9_-]+)/.exec(out.join(''))?.[1]
    expect(key).toBeDefined()
    expect(await app.services.agents.authenticate(key!)).toMatch(/^agt_/)
    await app.close()
  })

  it.each(['notahost.invalid', '999.1.1.1'])('HOST=%s is refused as a host that does not resolve', async (host) => {
    const db = join(tempDir(), 'gk.db')
    const started = start({ GOALKEEPER_DB: db, HOST: host, PORT: '0', LOG_LEVEL: 'silent', GOALKEEPER_ADMIN_TOKEN: 'admin-token-0123456789' })
    await expect(started).rejects.toThrow(StartupError)
    // ENOTFOUND, or EAI_AGAIN where no DNS server answers.
    const escaped = host.replaceAll('.', '\\.')
    await expect(started).rejects.toThrow(new RegExp(`^Cannot listen on HOST=${escaped} PORT=0: HOST is neither an IP address nor a name that resolves \\(getaddrinfo E[A-Z_]+ ${escaped}\\)$`))
  })

  it('stops the process with exit code 1 and a single line on stderr', { timeout: 30_000 }, async () => {
    const port = await busyPort()
    const { code, stderr } = await runServer({ GOALKEEPER_DB: join(tempDir(), 'gk.db'), PORT: String(port) })
    expect(code).toBe(1)
    expect(stderr).toMatch(new RegExp(`^Cannot listen on HOST=127\\.0\\.0\\.1 PORT=${port}: the port is already in use \\(EADDRINUSE\\)[^\\n]*\\n$`))
  })
})

describe('off loopback without an admin token', () => {
  it('isLoopback covers every loopback spelling and nothing else', () => {
    for (const h of ['localhost', '127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(isLoopback(h), h).toBe(true)
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com']) expect(isLoopback(h), h).toBe(false)
  })

  it('warns only when nothing under /v1 could be reached', () => {
    const warning = unreachableWarning(loadConfig({ HOST: '0.0.0.0' }), 0)
    expect(warning).toMatch(/^HOST=0\.0\.0\.0 is not a loopback address and GOALKEEPER_ADMIN_TOKEN is unset/)
    expect(warning).toContain('Set GOALKEEPER_ADMIN_TOKEN')
    expect(unreachableWarning(loadConfig({ HOST: '0.0.0.0' }), 1)).toBeUndefined()
    expect(unreachableWarning(loadConfig({ HOST: '0.0.0.0', GOALKEEPER_ADMIN_TOKEN: 'admin-token-0123456789' }), 0)).toBeUndefined()
    expect(unreachableWarning(loadConfig({ HOST: '127.0.0.1' }), 0)).toBeUndefined()
  })

  it('logs that warning at start', { timeout: 30_000 }, async () => {
    const { code, stdout } = await runServer({ GOALKEEPER_DB: join(tempDir(), 'gk.db'), HOST: '0.0.0.0' }, 'Set GOALKEEPER_ADMIN_TOKEN')
    expect(code).toBe(0)
    const line = stdout.split('\n').find((l) => l.includes('not a loopback address'))
    expect(JSON.parse(line!)).toMatchObject({ level: 40, msg: expect.stringContaining('nothing under /v1 is reachable') })
    expect(stdout).not.toContain('gk_')
  })
})
