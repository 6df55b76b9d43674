/**
 * `npm start`: builds when a source is newer than what the last build wrote (or nothing is built
 * yet), then runs the server in this very process. The npm script `exec`s node on this file with
 * the server's heap flags, so npm's one child is the server: npm forwards SIGTERM and SIGINT to it,
 * and its exit code (0 after a clean shutdown) becomes npm's. Plain JavaScript: it runs before any build.
 */
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** What `npm run build` reads, and the files it writes last of each part (tsc, the dashboard). */
const SOURCES = ['src', 'ui', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']
const BUILT = ['dist/server.js', 'dist/webui/index.html']

/** The newest modification time under `path` (a file or a folder), 0 when it does not exist. */
function newest(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** True when a build is missing or older than a source. */
export function buildIsStale(root = ROOT) {
  const built = Math.min(...BUILT.map((f) => newest(join(root, f)) || -Infinity))
  return Math.max(...SOURCES.map((f) => newest(join(root, f)))) > built
}

/** Runs `npm run build`; a signal meanwhile stops it, and then this process, cleanly. */
function build() {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
    let stopped = false
    const stop = (signal) => {
      stopped = true
      child.kill(signal)
    }
    for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, stop)
    child.on('exit', (code) => {
      for (const signal of ['SIGTERM', 'SIGINT']) process.off(signal, stop)
      if (stopped) process.exit(0)
      if (code !== 0) process.exit(code ?? 1)
      resolve()
    })
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (buildIsStale()) await build()
  const { main } = await import(pathToFileURL(join(ROOT, 'dist', 'server.js')).href)
  await main()
}
