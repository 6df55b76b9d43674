/**
 * Starts servers as child processes for the HTTP benchmarks and guarantees their cleanup: every
 * child is killed and every temp dir removed on normal return, on a thrown error, on SIGINT/SIGTERM
 * and on process exit (the `exit` handler is synchronous, so it SIGKILLs and uses rmSync).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { startCommand } from './start-command.js'

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface ChildServer {
  name: string
  pid: number
  baseUrl: string
  /** Resident set size of the child right now, bytes (Linux /proc; `ps` elsewhere). */
  rss(): number
  /** Peak resident set size of the child so far, bytes (Linux only; NaN elsewhere). */
  peakRss(): number
  /** CPU time (user + system) the child has used so far, µs (Linux /proc; NaN elsewhere). */
  cpuMicros(): number
  /** SIGTERM, wait for exit (SIGKILL after 10 s). */
  stop(): Promise<void>
}

const children = new Set<ChildProcess>()
const tempDirs = new Set<string>()

function killAllSync(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  children.clear()
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
  tempDirs.clear()
}

process.once('exit', killAllSync)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAllSync()
    process.exit(130)
  })
}

/** A temp dir removed on every exit path. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  tempDirs.delete(dir)
}

/** A port that was free a moment ago (the child binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}

export interface SpawnOptions {
  name: string
  /** Node arguments, relative to the repo root (e.g. `['dist/server.js']` or `['--import', 'tsx', 'x.ts']`). */
  args: string[]
  env: Record<string, string>
  /** Path polled until it answers 200 (e.g. /readyz). */
  readyPath: string
  port: number
  timeoutMs?: number
}

const CLOCK_TICK_US = 10_000 // USER_HZ is 100 on Linux

function cpuMicros(pid: number): number {
  try {
    // Fields after the `(comm)`: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US
  } catch {
    return Number.NaN
  }
}

/** Spawns `node <args>` with the given env (on top of a clean process env) and waits until ready. */
export async function spawnServer(opts: SpawnOptions): Promise<ChildServer> {
  const env: Record<string, string> = {}
  // The parent's own GOALKEEPER_* settings (an LLM URL, a rate limit) must not leak into the run.
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('GOALKEEPER_')) env[k] = v
  Object.assign(env, opts.env)
  const child = spawn(process.execPath, opts.args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  // Always drain the pipes (a full pipe would block the child); keep the tail for error messages.
  let tail = ''
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  // BENCH_SERVER_LOG=path: each server's output also goes to path.<name> (e.g. --trace-gc's lines).
  if (process.env.BENCH_SERVER_LOG) {
    const log = createWriteStream(`${process.env.BENCH_SERVER_LOG}.${opts.name}`)
    child.stdout!.pipe(log)
    child.stderr!.pipe(log)
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  const baseUrl = `http://127.0.0.1:${opts.port}`
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000)
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child)
      throw new Error(`${opts.name} exited before it was ready (code ${child.exitCode}):\n${tail}`)
    }
    try {
      const res = await fetch(baseUrl + opts.readyPath)
      await res.arrayBuffer()
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      children.delete(child)
      throw new Error(`${opts.name} was not ready within ${opts.timeoutMs ?? 60_000} ms:\n${tail}`)
    }
    await sleep(100)
  }

  const pid = child.pid!
  return {
    name: opts.name,
    pid,
    baseUrl,
    rss: () => statusField(pid, 'VmRSS'),
    peakRss: () => statusField(pid, 'VmHWM'),
    cpuMicros: () => cpuMicros(pid),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(timer)
      }
      children.delete(child)
    },
  }
}

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef'

/**
 * Compiles src/ to dist/ exactly as `npm start` does (its prestart is `npm run build`), so the
 * benchmark measures what users run: plain node on compiled JS, no loader thread. Throws with
 * the compiler output when the build fails.
 */
export function buildDist(): void {
  const t0 = Date.now()
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const res = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' })
  if (res.status !== 0) throw new Error(`npm run build failed:\n${res.stdout}${res.stderr}`)
  console.log(`built dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
}

export interface GoalkeeperOptions {
  logLevel?: string
  /** Run src/server.ts through tsx instead of the compiled dist/server.js (quick looks; adds a loader thread's memory). */
  fromSource?: boolean
  /** PostgreSQL instead of a fresh SQLite file (GOALKEEPER_DATABASE_URL). */
  databaseUrl?: string | undefined
  /** More environment variables for the server. */
  env?: Record<string, string>
}

/** The real goalkeeper server on a fresh SQLite file in a temp dir, rate limit off. */
export async function startGoalkeeper(opts: GoalkeeperOptions = {}): Promise<ChildServer & { dir: string }> {
  const dir = tempDir('goalkeeper-bench-')
  const port = await freePort()
  const start = startCommand()
  const server = await spawnServer({
    name: 'goalkeeper',
    // BENCH_CPU_PROF=dir writes a V8 CPU profile of the server there when it exits.
    args: [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ...start.flags,
      // BENCH_NODE_FLAGS="--trace-gc …": more node flags for the server, after npm start's own.
      ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean),
      ...(opts.fromSource ? ['--import', 'tsx', 'src/server.ts'] : ['dist/server.js']),
    ],
    port,
    readyPath: '/readyz',
    env: {
      ...start.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      GOALKEEPER_DB: join(dir, 'goalkeeper.db'),
      ...(opts.databaseUrl === undefined ? {} : { GOALKEEPER_DATABASE_URL: opts.databaseUrl }),
      GOALKEEPER_ADMIN_TOKEN: ADMIN_TOKEN,
      GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: opts.logLevel ?? 'warn',
      ...opts.env,
    },
  })
  return {
    ...server,
    dir,
    async stop() {
      await server.stop()
      removeTempDir(dir)
    },
  }
}

/**
 * The baseline: bare Fastify, one prepared SQLite insert per POST, same pragmas; or with `pgUrl`
 * one `pg` INSERT per POST on a pool as large as goalkeeper's (bench/baseline-server.ts).
 */
export async function startBaseline(pgUrl?: string): Promise<ChildServer> {
  const dir = tempDir('goalkeeper-baseline-')
  const port = await freePort()
  const server = await spawnServer({
    name: 'baseline',
    args: ['--import', 'tsx', 'bench/baseline-server.ts'],
    port,
    readyPath: '/ping',
    env: { PORT: String(port), BASELINE_DB: join(dir, 'baseline.db'), ...(pgUrl === undefined ? {} : { BASELINE_PG_URL: pgUrl }) },
  })
  return {
    ...server,
    async stop() {
      await server.stop()
      removeTempDir(dir)
    },
  }
}
