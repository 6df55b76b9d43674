import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CACHE_ROOT, installPackage } from '../npm-cache.js'

/**
 * A coding agent's CLI for the hook tests, installed from the npm registry into the test cache
 * (test/npm-cache.ts; never a dependency of the project). Versions are pinned: hook payloads change
 * between releases, so an upgrade is a deliberate edit (and a rerun of the README's findings).
 */
export interface NpmCli {
  /** As people name it, for the skip line. */
  name: string
  pkg: string
  version: string
  /** The cache folder's name. */
  dir: string
  /** The executable inside the install's node_modules. */
  binary: (nodeModules: string) => string
  /** An environment variable that points at an executable to use instead. */
  override: string
}

const run = promisify(execFile)

const cacheDir = (cli: NpmCli) => join(CACHE_ROOT, cli.dir, cli.version)

const howToEnable = (cli: NpmCli) =>
  `${cli.name} tests skipped: to run them, let \`npm install ${cli.pkg}@${cli.version}\` reach the npm registry (it installs into ${cacheDir(cli)}; GOALKEEPER_TEST_CACHE moves it), or set ${cli.override} to a ${cli.name} executable of that version`

const installing = new Map<string, Promise<string>>()

/**
 * The executable's path, installing it on first use. Concurrent test files may install at once:
 * each installs into its own folder and renames it into place, and a loser of that race uses the
 * winner's.
 */
function installCli(cli: NpmCli): Promise<string> {
  let pending = installing.get(cli.pkg)
  if (pending === undefined) installing.set(cli.pkg, (pending = install(cli)))
  return pending
}

async function install(cli: NpmCli): Promise<string> {
  const override = process.env[cli.override]
  const bin = override ?? cli.binary(join(await installPackage(cli.dir, cli.pkg, cli.version), 'node_modules'))
  if (override === undefined && !existsSync(bin)) throw new Error(`npm installed no ${cli.name} executable for ${process.platform}-${process.arch}`)
  const { stdout } = await run(bin, ['--version'], { timeout: 30_000 })
  if (!stdout.includes(cli.version)) throw new Error(`${bin} --version says ${stdout.trim()}, not ${cli.version}`)
  return bin
}

/**
 * For a test file's top level: the executable, or undefined when it cannot be installed (the
 * tests then skip, with one line saying how to enable them). Under CI=true a failed install throws.
 */
export async function cliOrSkip(cli: NpmCli): Promise<string | undefined> {
  try {
    return await installCli(cli)
  } catch (err) {
    const why = String((err as Error).message ?? err).split('\n')[0]
    if (process.env.CI === 'true') throw new Error(`CI=true but ${cli.name} ${cli.version} could not be installed: ${why}`)
    console.warn(`${howToEnable(cli)} (${why})`)
    return undefined
  }
}

export interface CliResult {
  exitCode: number | null
  stdout: string
  stderr: string
}

/** Runs an agent's CLI to the end (killed after `timeoutMs`, inside the tests' own timeout). */
export function runCli(bin: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (exitCode) => {
      clearTimeout(timer)
      resolve({ exitCode, stdout, stderr })
    })
  })
}

/** A throwaway project folder and HOME under one temporary root; `remove()` deletes it. */
export class Sandbox {
  readonly root = mkdtempSync(join(tmpdir(), 'goalkeeper-agent-'))
  readonly dir = join(this.root, 'project')
  readonly home = join(this.root, 'home')

  constructor() {
    mkdirSync(this.dir)
    mkdirSync(this.home)
  }

  /** A clean environment: nothing of the developer's own agents, API keys or proxies leaks in. */
  env(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, HOME: this.home, SHELL: '/bin/bash', LANG: 'C.UTF-8', TMPDIR: this.root, ...extra }
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true })
  }
}
