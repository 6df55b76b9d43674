import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from '../free-port.js'

/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` into a temp folder, a server on
 * a free loopback port, removed again by `stop()`. It uses the server binaries of the machine
 * (`GOALKEEPER_PG_BIN`, else the newest `/usr/lib/postgresql/<n>/bin`); `initdb` refuses to run
 * as root, so as root it runs as the `postgres` user.
 */
export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  url: string
  stop(): void
  /** Shuts the server down (`pg_ctl stop -m fast`: sessions are ended, transactions rolled back), keeping its data. */
  halt(): Promise<void>
  /** Starts a halted server again, on the same port and data; resolves once it accepts connections. */
  resume(): Promise<void>
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>
}

export const HOW_TO_ENABLE = 'install the PostgreSQL server binaries (Debian: apt-get install postgresql) or set GOALKEEPER_PG_BIN to the folder holding initdb and pg_ctl'

/** The folder holding `initdb` and `pg_ctl`, or undefined when the machine has none. */
export function findPgBin(): string | undefined {
  const fromEnv = process.env.GOALKEEPER_PG_BIN
  if (fromEnv) return existsSync(join(fromEnv, 'initdb')) ? fromEnv : undefined
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : undefined
}

export interface ClusterOptions {
  /** Durable commits (benchmarks). Tests run with fsync off: nothing they write must survive a crash of the machine. */
  durable?: boolean
  maxConnections?: number
}

export async function startPgCluster(bin: string, options: ClusterOptions = {}): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'goalkeeper-pg-'))
  const asRoot = process.getuid?.() === 0
  let uid: number | undefined
  if (asRoot) {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  const command = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args])
  const run = (cmd: string, args: string[]): void => {
    const res = spawnSync(...command(cmd, args), { encoding: 'utf8', cwd: dir })
    if (res.status !== 0) throw new Error(`${cmd} failed (${res.status}): ${res.stderr || res.stdout || res.error?.message}`)
  }
  // Without blocking the event loop: the tests that stop the server keep sending requests meanwhile.
  const runAsync = async (cmd: string, args: string[]): Promise<void> => {
    await promisify(execFile)(...command(cmd, args), { cwd: dir })
  }
  const data = join(dir, 'data')
  const port = await freePort()
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    `-c max_connections=${options.maxConnections ?? 200}`,
    ...(options.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ]
  const start = ['-D', data, '-l', join(dir, 'server.log'), '-o', settings.join(' '), '-w', '-t', '30']
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'])
    run('pg_ctl', [...start, 'start'])
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  let stopped = false
  let running = true
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async halt() {
      await runAsync('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
      running = false
    },
    async resume() {
      await runAsync('pg_ctl', [...start, 'start'])
      running = true
    },
    restart: () => runAsync('pg_ctl', [...start, '-m', 'fast', 'restart']),
    stop() {
      if (stopped) return
      stopped = true
      try {
        if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/** A cluster with durable commits (fsync on), as a production server has: the benchmarks'. */
export async function startDurableCluster(): Promise<PgCluster> {
  const bin = findPgBin()
  if (bin === undefined) throw new Error(`the benchmarks on PostgreSQL need its server binaries: ${HOW_TO_ENABLE}`)
  return startPgCluster(bin, { durable: true })
}

/** Statements on the cluster's `postgres` database (creating and dropping databases). */
export async function onCluster<T>(clusterUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: clusterUrl })
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.end()
  }
}

/** Creates database `name` in the cluster at `clusterUrl`, empty or a copy of `template`, and returns its URL. */
export async function createDatabaseIn(clusterUrl: string, name: string, template?: string): Promise<string> {
  await onCluster(clusterUrl, (c) => c.query(`CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template}`}`))
  const url = new URL(clusterUrl)
  url.pathname = `/${name}`
  return url.toString()
}
