import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, Sandbox, type CliResult, type NpmCli } from './cli.js'

/**
 * Codex CLI and Gemini CLI, whose hooks are commands: JSON on stdin, the answer on stdout. Each
 * runs non-interactively in a throwaway project and HOME against its fake model
 * (./fake-openai.ts, ./fake-gemini.ts); `forwardTo(url)` is a hook command that POSTs the event to
 * an endpoint and prints its answer, as goalkeeper's documented one-liner does.
 */

const MUSL_TRIPLES: Record<string, string> = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' }

export const CODEX: NpmCli = {
  name: 'Codex CLI',
  pkg: '@openai/codex',
  version: '0.171.0',
  dir: 'codex',
  // The native binary sits in the platform package (an optional dependency) that bin/codex.js would find.
  binary: (nodeModules) => join(nodeModules, '@openai', `codex-${process.platform}-${process.arch}`, 'vendor', MUSL_TRIPLES[process.arch] ?? 'unknown', 'bin', 'codex'),
  override: 'GOALKEEPER_CODEX_BIN',
}

export const GEMINI_CLI: NpmCli = {
  name: 'Gemini CLI',
  pkg: '@google/gemini-cli',
  version: '0.61.0',
  dir: 'gemini-cli',
  binary: (nodeModules) => join(nodeModules, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
  override: 'GOALKEEPER_GEMINI_CLI_BIN',
}

/** The hook command: the event's JSON to `url`, the answer's body to stdout. */
export const forwardTo = (url: string) => `curl -sS --max-time 10 -H 'content-type: application/json' --data-binary @- '${url}'`

/**
 * `hooks` for hooks.json / settings.json: the same command on each of `events`, every tool (no
 * matcher). Gemini CLI reads `timeout` in milliseconds; Codex, like Claude Code, in seconds.
 */
export function commandHooks(events: readonly string[], command: string, timeout: number) {
  return Object.fromEntries(events.map((e) => [e, [{ hooks: [{ type: 'command' as const, command, timeout }] }]]))
}

export interface AgentResult extends CliResult {
  sessionId?: string
}

/**
 * `codex exec` with `$CODEX_HOME/config.toml` pointing a model provider at the fake and
 * `$CODEX_HOME/hooks.json` holding `hooks`. Untrusted hooks are skipped silently in `codex exec`,
 * so it runs with --dangerously-bypass-hook-trust (a person trusts them once in `/hooks`).
 */
export class CodexProject extends Sandbox {
  private readonly codexHome = join(this.home, '.codex')
  private readonly bin: string

  constructor(bin: string, modelUrl: string, hooks: object) {
    super()
    this.bin = bin
    mkdirSync(this.codexHome)
    const config = [
      'model = "gpt-5.5"',
      'model_provider = "fake"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      '[model_providers.fake]',
      'name = "fake"',
      `base_url = "${modelUrl}"`,
      'wire_api = "responses"',
      'env_key = "FAKE_OPENAI_API_KEY"',
      // Nothing leaves the machine: plugins would sync their marketplace from GitHub at start, and
      // usage metrics go to OpenAI.
      '[features]',
      'plugins = false',
      '[analytics]',
      'enabled = false',
    ]
    writeFileSync(join(this.codexHome, 'config.toml'), `${config.join('\n')}\n`)
    writeFileSync(join(this.codexHome, 'hooks.json'), JSON.stringify({ hooks }, null, 2))
  }

  /** `env`: more environment for the CLI and its hooks (e.g. GOALKEEPER_API_KEY). */
  async run(prompt: string, env: Record<string, string> = {}): Promise<AgentResult> {
    const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', prompt]
    const run = await runCli(this.bin, args, { cwd: this.dir, env: this.env({ CODEX_HOME: this.codexHome, FAKE_OPENAI_API_KEY: 'sk-fake', ...env }) })
    // --json writes one event a line; the first is {"type": "thread.started", "thread_id": …}.
    const started = run.stdout.split('\n').find((l) => l.includes('"thread.started"'))
    return { ...run, sessionId: started === undefined ? undefined : (JSON.parse(started) as { thread_id: string }).thread_id }
  }
}

/**
 * `gemini -p` with `~/.gemini/settings.json` holding `hooks`, the API key auth pointed at the fake
 * (GOOGLE_GEMINI_BASE_URL), usage statistics off; --skip-trust keeps yolo mode in an untrusted folder.
 */
export class GeminiProject extends Sandbox {
  private readonly bin: string
  private readonly modelUrl: string

  constructor(bin: string, modelUrl: string, hooks: object) {
    super()
    this.bin = bin
    this.modelUrl = modelUrl
    mkdirSync(join(this.home, '.gemini'))
    const settings = { hooks, security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false }, general: { disableAutoUpdate: true } }
    writeFileSync(join(this.home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2))
  }

  /** `env`: more environment for the CLI and its hooks (e.g. GOALKEEPER_API_KEY). */
  async run(prompt: string, env: Record<string, string> = {}): Promise<AgentResult> {
    const args = ['-p', prompt, '--approval-mode', 'yolo', '--skip-trust', '--output-format', 'json']
    const run = await runCli(this.bin, args, { cwd: this.dir, env: this.env({ GOOGLE_GEMINI_BASE_URL: this.modelUrl, GEMINI_API_KEY: 'fake-key', ...env }) })
    let sessionId: string | undefined
    try {
      sessionId = (JSON.parse(run.stdout) as { session_id?: string }).session_id
    } catch {
      sessionId = undefined
    }
    return { ...run, sessionId }
  }
}
