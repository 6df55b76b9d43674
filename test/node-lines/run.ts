/**
 * The suite's share on the other Node.js LTS lines (NODE_LINES), for .ci/run. For each line, in a
 * copy of the project's files: `npm ci` under that Node.js, as its user's install runs (native
 * addons built against that line's headers; an EBADENGINE warning fails the line), then the SQLite
 * driver check, the start-up tests and `npm start`, the README walk-through, a route suite on both
 * databases and the PostgreSQL suite. The project's own node_modules is never touched. Writes one
 * vitest JSON report per line, `node-<version>.json`, into the folder given (a line whose install
 * fails gets a report with one failed entry saying why). Exits 1 when any line failed.
 *
 *   node --import tsx test/node-lines/run.ts <report folder> [version…]
 */
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { npmEnv, npmUnder } from '../npm-cache.js'
import { NODE_LINES, nodeHome } from './lines.js'

const ROOT = resolve(import.meta.dirname, '..', '..')
/**
 * The SQLite driver's release, start-up and `npm start`, the README walk-through, a route suite (on
 * both databases), the PostgreSQL suite, and the reminders' crash test (on Node.js 24 it caught
 * deliveries sent before their group commit).
 */
const LINE_TESTS = [
  'test/db/sqlite-driver.test.ts',
  'test/startup.test.ts',
  'test/npm-start.test.ts',
  'test/readme.test.ts',
  'test/http/sessions.test.ts',
  'test/postgres/pg-database.test.ts',
  'test/reminders/crash.test.ts',
]

const [reports, ...asked] = process.argv.slice(2)
if (reports === undefined) throw new Error('usage: node --import tsx test/node-lines/run.ts <report folder> [version…]')
const seconds = (t0: number) => `${Math.round((performance.now() - t0) / 1000)} s`
mkdirSync(reports, { recursive: true })

let failed = false
for (const version of asked.length > 0 ? asked : NODE_LINES) {
  const report = join(resolve(reports), `node-${version}.json`)
  const tree = mkdtempSync(join(tmpdir(), `goalkeeper-node-${version}-`))
  try {
    const home = await nodeHome(version)
    const node = join(home, 'bin', 'node')
    copyProject(tree)
    let t0 = performance.now()
    await install(node, home, tree)
    console.log(`node-lines: Node ${version}: npm ci took ${seconds(t0)}`)
    t0 = performance.now()
    const code = await vitest(node, tree, report)
    console.log(`node-lines: Node ${version}: tests took ${seconds(t0)}, vitest exited ${code}`)
    if (code !== 0) failed = true
  } catch (err) {
    failed = true
    const message = `Node ${version}: ${(err as Error).message}`
    console.error(`node-lines: ${message}`)
    writeFileSync(
      report,
      JSON.stringify({ numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, testResults: [{ name: `install on Node ${version}`, status: 'failed', message, assertionResults: [] }] }),
    )
  } finally {
    const t0 = performance.now()
    rmSync(tree, { recursive: true, force: true })
    console.log(`node-lines: Node ${version}: removing the copy took ${seconds(t0)}`)
  }
}
process.exit(failed ? 1 : 0)

/** The files a clone has (tracked, and new ones not ignored), without node_modules or builds. */
function copyProject(tree: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
  for (const file of files.split('\0')) if (file !== '' && existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(tree, file))
}

/**
 * `npm ci` under `node`. node-gyp builds against the headers shipped with that Node.js (the user's
 * npm config may name another Node's, and their download site is out of reach).
 */
async function install(node: string, home: string, tree: string): Promise<void> {
  const { stdout, stderr } = await npmUnder(node, ['ci', '--no-audit', '--no-fund'], { cwd: tree, env: { npm_config_nodedir: home }, timeout: 900_000 }).catch(
    (err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`npm ci failed: ${err.stderr?.trim().split('\n').slice(-20).join('\n') ?? err.message}`)
    },
  )
  process.stdout.write(stdout)
  process.stderr.write(stderr)
  const engine = `${stdout}\n${stderr}`.split('\n').filter((l) => l.includes('EBADENGINE'))
  if (engine.length > 0) throw new Error(`npm ci warned EBADENGINE:\n${engine.join('\n')}`)
}

function vitest(node: string, tree: string, report: string): Promise<number | null> {
  const args = [join(tree, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...LINE_TESTS]
  // PATH leads to this Node.js: the README's blocks and the spawned servers run `node` and npm.
  const child = spawn(node, args, { cwd: tree, env: npmEnv(node), stdio: ['ignore', 'inherit', 'inherit'] })
  return new Promise((done, fail) => child.on('error', fail).on('exit', done))
}
