import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { freePort } from '../free-port.js'

/** A real goalkeeper process (`node dist/server.js`, or src/server.ts through tsx) on a PostgreSQL database or a SQLite file. */
export interface Replica {
  url: string
  child: ChildProcess
  /** What the process printed on stderr (a replica that dies says why here). */
  stderr: string[]
  /** Its log lines (stdout). */
  stdout: string[]
  /** SIGKILL: no shutdown hook runs, claims stay as they were. */
  kill(): void
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>
}

export const ADMIN_TOKEN = 'replica-admin-token-0123456789'

/** Compiles src/ into dist/ (tsc only: the dashboard bundle is not needed here). */
export function buildServer(): void {
  const res = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { encoding: 'utf8' })
  if (res.status !== 0 || !existsSync('dist/server.js') || statSync('dist/server.js').size === 0) {
    throw new Error(`building dist/ failed (${res.status}): ${res.stdout}${res.stderr}`)
  }
}

export interface ServerOptions {
  /** Runs src/server.ts through tsx: no build of dist/ (which another test file may be rewriting meanwhile). */
  fromSource?: boolean
  /** The command the node command line runs under (e.g. `unshare`), as [file, ...args before node's]. */
  wrapper?: string[]
}

/** A replica on PostgreSQL at `databaseUrl`. */
export function startReplica(databaseUrl: string, env: Record<string, string> = {}, options: ServerOptions = {}): Promise<Replica> {
  return startServer({ GOALKEEPER_DATABASE_URL: databaseUrl, ...env }, options)
}

/** A goalkeeper process with `env` (a database among it), ready (`/readyz` 200) when this resolves. */
export async function startServer(env: Record<string, string>, options: ServerOptions = {}): Promise<Replica> {
  const port = await freePort()
  // The runner's own GOALKEEPER_* settings (an LLM URL, a database file) must not reach the replicas.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GOALKEEPER_')))
  const node = [process.execPath, ...(options.fromSource ? ['--import', 'tsx', 'src/server.ts'] : ['dist/server.js'])]
  const [file, ...args] = [...(options.wrapper ?? []), ...node]
  const child = spawn(file!, args, {
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: String(port),
      GOALKEEPER_ADMIN_TOKEN: ADMIN_TOKEN,
      GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
      GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stderr: string[] = []
  const stdout: string[] = []
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()))
  child.stdout!.on('data', (c: Buffer) => stdout.push(c.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`replica exited (${child.exitCode}): ${stderr.join('')}`)
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ready) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`replica not ready within 30 s: ${stderr.join('')}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url,
    child,
    stderr,
    stdout,
    kill: () => child.kill('SIGKILL'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
