import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

/**
 * Programs the tests run but the project does not depend on (coding-agent CLIs, Node.js binaries of
 * the other LTS lines, the MCP Inspector), installed from the npm registry, and from nowhere else,
 * into a cache outside the repository: `~/.cache/goalkeeper-test/<dir>/<version>`
 * (`GOALKEEPER_TEST_CACHE` moves the root). Versions are pinned, so a cached install is used as it
 * is, with no network.
 */

const run = promisify(execFile)
export const CACHE_ROOT = process.env.GOALKEEPER_TEST_CACHE ?? join(homedir(), '.cache', 'goalkeeper-test')

/** Runs npm (the machine's) under `node`, as that Node.js line's user would, with `env` added. */
export function npmUnder(node: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number }) {
  return run('npm', args, { cwd: options.cwd, env: { ...npmEnv(node), ...options.env }, timeout: options.timeout, maxBuffer: 64 << 20 })
}

/**
 * The environment for an npm run under `node`: its bin folder first on PATH (npm and the scripts
 * it runs start that `node`), without the lifecycle variables of an outer `npm test`, which would
 * point the inner npm at this project.
 */
export function npmEnv(node: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_(lifecycle|package|config_(local_)?prefix|config_global|command|execpath|node_execpath)/i.test(k)) env[k] = v
  env.PATH = `${dirname(node)}:${process.env.PATH ?? '/usr/bin:/bin'}`
  return env
}

const installing = new Map<string, Promise<string>>()

/**
 * `pkg@version`'s install folder (holding its node_modules), installed on first use with npm
 * under `node` (the Node.js the package needs; the machine's by default). Concurrent callers,
 * in this process or in other test workers, each install into a folder of their own and rename it
 * into place; a loser of that race uses the winner's.
 */
export function installPackage(dir: string, pkg: string, version: string, node = process.execPath): Promise<string> {
  const key = `${dir}/${version}`
  let pending = installing.get(key)
  if (pending === undefined) installing.set(key, (pending = install(dir, pkg, version, node)))
  return pending
}

async function install(dir: string, pkg: string, version: string, node: string): Promise<string> {
  const target = join(CACHE_ROOT, dir, version)
  const marker = join(target, 'node_modules', ...pkg.split('/'), 'package.json')
  if (existsSync(marker)) return target
  mkdirSync(dirname(target), { recursive: true })
  const staging = mkdtempSync(`${target}.partial-`)
  try {
    writeFileSync(join(staging, 'package.json'), '{ "private": true }\n')
    // No install scripts (nothing downloads on its own), no lockfile, no audit. Off CI, an
    // unreachable registry fails at once, not after npm's retries.
    const retries = process.env.CI === 'true' ? [] : ['--fetch-retries=0']
    const args = ['install', '--prefix', staging, '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', ...retries, `${pkg}@${version}`]
    await npmUnder(node, args, { cwd: staging, timeout: 280_000 }).catch((err: Error & { stderr?: string }) => {
      throw new Error(`npm install ${pkg}@${version} failed: ${err.stderr?.split('\n').find((l) => /error/i.test(l)) ?? err.message}`)
    })
    if (!existsSync(join(staging, 'node_modules', ...pkg.split('/'), 'package.json'))) throw new Error(`npm installed no ${pkg}`)
    try {
      renameSync(staging, target)
    } catch (err) {
      if (!existsSync(marker)) throw err
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  return target
}
