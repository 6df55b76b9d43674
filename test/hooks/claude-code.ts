import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * The real Claude Code binary for the hook tests: installed from the npm registry into a cache
 * outside the repository (never a dependency of the project), and run with `claude -p` in a
 * throwaway project and HOME against a fake model (./fake-anthropic.ts).
 *
 * The version is pinned: http hooks need 2.1.118 or later, and hook payloads change between
 * releases, so an upgrade is a deliberate edit here (and a rerun of the README's findings).
 */
export const CLAUDE_CODE_VERSION = '2.1.332'

/** Every hook event this version knows (its own list); http hooks run for all but SessionStart and Setup. */
export const HOOK_EVENTS = [
  'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'Notification', 'UserPromptSubmit', 'UserPromptExpansion',
  'SessionStart', 'SessionEnd', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact',
  'PreModelSwitch', 'PostModelSwitch', 'PermissionRequest', 'PermissionDenied', 'Setup', 'TeammateIdle', 'TaskCreated',
  'TaskCompleted', 'Elicitation', 'ElicitationResult', 'ConfigChange', 'WorktreeCreate', 'WorktreeRemove',
  'InstructionsLoaded', 'CwdChanged', 'FileChanged', 'DirectoryAdded', 'MessageDisplay', 'PreSkillShellCommand',
] as const

const run = promisify(execFile)

/** `GOALKEEPER_CLAUDE_CODE_CACHE` moves the cache; one folder per version inside it. */
export const CACHE_DIR = join(process.env.GOALKEEPER_CLAUDE_CODE_CACHE ?? join(homedir(), '.cache', 'goalkeeper-test', 'claude-code'), CLAUDE_CODE_VERSION)

export const HOW_TO_ENABLE = `Claude Code tests skipped: to run them, let \`npm install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}\` reach the npm registry (it installs into ${CACHE_DIR}; GOALKEEPER_CLAUDE_CODE_CACHE moves it), or set GOALKEEPER_CLAUDE_CODE_BIN to a claude binary of that version`

/**
 * The wrapper package's postinstall copies the native binary from its platform package
 * (an optional dependency) over bin/claude.exe; npm may not run install scripts, so the binary is
 * taken from the platform package itself.
 */
function platformPackage(): string {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  const musl = process.platform === 'linux' && report?.header?.glibcVersionRuntime === undefined
  return `@anthropic-ai/claude-code-${process.platform}-${process.arch}${musl ? '-musl' : ''}`
}

const binaryIn = (dir: string) => join(dir, 'node_modules', platformPackage(), process.platform === 'win32' ? 'claude.exe' : 'claude')

let installing: Promise<string> | undefined

/**
 * The binary's path, installing it on first use (about 100 MB from the registry, once per cache).
 * Concurrent test files may install at once: each installs into its own folder and renames it
 * into place, and a loser of that race uses the winner's.
 */
export function installClaudeCode(): Promise<string> {
  installing ??= install()
  return installing
}

async function install(): Promise<string> {
  const override = process.env.GOALKEEPER_CLAUDE_CODE_BIN
  const bin = override ?? binaryIn(CACHE_DIR)
  if (override === undefined && !existsSync(bin)) {
    mkdirSync(join(CACHE_DIR, '..'), { recursive: true })
    const staging = mkdtempSync(`${CACHE_DIR}.partial-`)
    try {
      writeFileSync(join(staging, 'package.json'), '{ "private": true }\n')
      // Only the npm registry: no postinstall download (scripts off), no lockfile, no audit. Off
      // CI, an unreachable registry skips the tests at once instead of after npm's minute of retries.
      const retries = process.env.CI === 'true' ? [] : ['--fetch-retries=0']
      const args = ['install', '--prefix', staging, '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', ...retries]
      await run('npm', [...args, `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`], { env: npmEnv(), timeout: 280_000, maxBuffer: 16 << 20 }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`npm install failed: ${err.stderr?.split('\n').find((l) => /error/i.test(l)) ?? err.message}`)
      })
      if (!existsSync(binaryIn(staging))) throw new Error(`npm installed no ${platformPackage()} binary (this platform may have none)`)
      try {
        renameSync(staging, CACHE_DIR)
      } catch (err) {
        if (!existsSync(bin)) throw err
      }
    } finally {
      rmSync(staging, { recursive: true, force: true })
    }
  }
  const { stdout } = await run(bin, ['--version'], { timeout: 30_000 })
  if (!stdout.includes(CLAUDE_CODE_VERSION)) throw new Error(`${bin} --version says ${stdout.trim()}, not ${CLAUDE_CODE_VERSION}`)
  return bin
}

/** npm run from inside `npm test` inherits the outer run's lifecycle variables: keep the user's npm config only. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_(lifecycle|package|config_(local_)?prefix|config_global|command)/i.test(k)) env[k] = v
  return env
}

/**
 * For a test file's top level: the binary, or undefined when it cannot be installed (the tests
 * then skip, with one line saying how to enable them). Under CI=true a failed install throws.
 */
export async function claudeCodeOrSkip(): Promise<string | undefined> {
  try {
    return await installClaudeCode()
  } catch (err) {
    const why = String((err as Error).message ?? err).split('\n')[0]
    if (process.env.CI === 'true') throw new Error(`CI=true but Claude Code ${CLAUDE_CODE_VERSION} could not be installed: ${why}`)
    console.warn(`${HOW_TO_ENABLE} (${why})`)
    return undefined
  }
}

/** One hook handler of Claude Code's settings (`hooks.<Event>[].hooks[]`), of type http. */
export interface HttpHook {
  type: 'http'
  url: string
  headers?: Record<string, string>
  /** The environment variables that `$VAR` / `${VAR}` in `headers` may read; others become ''. */
  allowedEnvVars?: string[]
  /** Seconds. */
  timeout?: number
}

/** `hooks` for settings.json: the same http hook on each of `events`. */
export function httpHooks(events: readonly string[], hook: Omit<HttpHook, 'type'>): Record<string, { hooks: HttpHook[] }[]> {
  return Object.fromEntries(events.map((e) => [e, [{ hooks: [{ type: 'http' as const, ...hook }] }]]))
}

export interface ClaudeResult {
  exitCode: number | null
  stdout: string
  stderr: string
  /** The `--output-format json` result (session_id, result, num_turns, is_error…), when stdout held one. */
  result?: { session_id: string; result?: string; is_error?: boolean; num_turns?: number; [key: string]: unknown }
  sessionId?: string
}

export interface RunOptions {
  /** Continues that session (`--resume`): SessionStart then has source `resume`. */
  resume?: string
  /** Added to the binary's environment (e.g. the hook's key for `allowedEnvVars`). */
  env?: Record<string, string>
  /** More arguments; `--permission-mode <mode>` among them replaces --dangerously-skip-permissions. */
  args?: string[]
  /** The run is killed after this long (default 30 s, inside the tests' own timeout). */
  timeoutMs?: number
}

/**
 * A throwaway project folder and HOME for `claude -p`: `.claude/settings.json` holds the given
 * settings (hooks, allowedHttpHookUrls…), the model is the fake at `modelUrl`. `remove()` deletes both.
 */
export class ClaudeProject {
  readonly root = mkdtempSync(join(tmpdir(), 'goalkeeper-claude-'))
  readonly dir = join(this.root, 'project')
  readonly home = join(this.root, 'home')
  private readonly bin: string
  private readonly modelUrl: string

  constructor(bin: string, modelUrl: string, settings: object) {
    this.bin = bin
    this.modelUrl = modelUrl
    mkdirSync(join(this.dir, '.claude'), { recursive: true })
    mkdirSync(this.home)
    writeFileSync(join(this.dir, '.claude', 'settings.json'), JSON.stringify(settings, null, 2))
  }

  run(prompt: string, options: RunOptions = {}): Promise<ClaudeResult> {
    const args = ['-p', prompt, '--output-format', 'json', ...(options.resume ? ['--resume', options.resume] : []), ...(options.args ?? [])]
    if (!args.includes('--permission-mode')) args.push('--dangerously-skip-permissions')
    // As root the binary refuses --dangerously-skip-permissions outside a sandbox it is told of.
    const root = process.getuid?.() === 0
    // A clean environment: nothing of the developer's own Claude Code, API keys or proxies leaks in.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: this.home,
      SHELL: '/bin/bash',
      LANG: 'C.UTF-8',
      TMPDIR: this.root,
      ANTHROPIC_BASE_URL: this.modelUrl,
      ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...(root ? { IS_SANDBOX: '1' } : {}),
      ...options.env,
    }
    return new Promise((resolve, reject) => {
      const child = spawn(this.bin, args, { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
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
        const result = parseResult(stdout)
        resolve({ exitCode, stdout, stderr, result, sessionId: result?.session_id })
      })
    })
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true })
  }
}

function parseResult(stdout: string): ClaudeResult['result'] {
  try {
    const parsed = JSON.parse(stdout.trim()) as ClaudeResult['result']
    return typeof parsed?.session_id === 'string' ? parsed : undefined
  } catch {
    return undefined
  }
}
