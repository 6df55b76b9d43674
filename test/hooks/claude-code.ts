import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliOrSkip, runCli, Sandbox, type CliResult, type NpmCli } from './cli.js'

/**
 * The real Claude Code binary for the hook tests, run with `claude -p` in a throwaway project and
 * HOME against a fake model (./fake-anthropic.ts). http hooks need 2.1.118 or later.
 *
 * The wrapper package's postinstall copies the native binary from its platform package (an
 * optional dependency) over bin/claude.exe; install scripts stay off, so the binary is taken from
 * the platform package itself.
 */
const CLAUDE_CODE: NpmCli = {
  name: 'Claude Code',
  pkg: '@anthropic-ai/claude-code',
  version: '2.1.332',
  dir: 'claude-code',
  binary: (nodeModules) => join(nodeModules, platformPackage(), process.platform === 'win32' ? 'claude.exe' : 'claude'),
  override: 'GOALKEEPER_CLAUDE_CODE_BIN',
}

function platformPackage(): string {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  const musl = process.platform === 'linux' && report?.header?.glibcVersionRuntime === undefined
  return `@anthropic-ai/claude-code-${process.platform}-${process.arch}${musl ? '-musl' : ''}`
}

/** For a test file's top level: the binary, or undefined (with a line saying why) when the tests skip. */
export const claudeCodeOrSkip = () => cliOrSkip(CLAUDE_CODE)

/** Every hook event this version knows (its own list); http hooks run for all but SessionStart and Setup. */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'PreModelSwitch',
  'PostModelSwitch',
  'PermissionRequest',
  'PermissionDenied',
  'Setup',
  'TeammateIdle',
  'TaskCreated',
  'TaskCompleted',
  'Elicitation',
  'ElicitationResult',
  'ConfigChange',
  'WorktreeCreate',
  'WorktreeRemove',
  'InstructionsLoaded',
  'CwdChanged',
  'FileChanged',
  'DirectoryAdded',
  'MessageDisplay',
  'PreSkillShellCommand',
] as const

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

export interface ClaudeResult extends CliResult {
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
 * settings (hooks, allowedHttpHookUrls…), the model is the fake at `modelUrl`.
 */
export class ClaudeProject extends Sandbox {
  private readonly bin: string
  private readonly modelUrl: string

  constructor(bin: string, modelUrl: string, settings: object) {
    super()
    this.bin = bin
    this.modelUrl = modelUrl
    mkdirSync(join(this.dir, '.claude'))
    writeFileSync(join(this.dir, '.claude', 'settings.json'), JSON.stringify(settings, null, 2))
  }

  async run(prompt: string, options: RunOptions = {}): Promise<ClaudeResult> {
    const args = ['-p', prompt, '--output-format', 'json', ...(options.resume ? ['--resume', options.resume] : []), ...(options.args ?? [])]
    if (!args.includes('--permission-mode')) args.push('--dangerously-skip-permissions')
    // As root the binary refuses --dangerously-skip-permissions outside a sandbox it is told of.
    const root = process.getuid?.() === 0
    const env = this.env({
      ANTHROPIC_BASE_URL: this.modelUrl,
      ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...(root ? { IS_SANDBOX: '1' } : {}),
      ...options.env,
    })
    const run = await runCli(this.bin, args, { cwd: this.dir, env, timeoutMs: options.timeoutMs })
    const result = parseResult(run.stdout)
    return { ...run, result, sessionId: result?.session_id }
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
