/**
 * Coding agents' hooks under load: S Claude Code sessions (default 200), opened by their first
 * prompt, then PreToolUse / PostToolUse events round-robin over them at fixed rates (open loop,
 * bench/open-loop.ts), against the real server (dist/server.js, a fresh SQLite file, `npm start`'s
 * flags). The agent waits on every answer, so the figure is the latency from each event's due time;
 * the target is p99 ≤ 20 ms with 200 sessions.
 *
 * Run: `npm run bench:hooks` (`--sessions 200 --rates 200,500,1000 --seconds 10`).
 */
import { buildDist, startGoalkeeper } from './child-server.js'
import { createAgent, flag, flagValue, prng } from './load.js'
import { latencyLine, openLoop, quantile } from './open-loop.js'

const SESSIONS = flag('sessions', 200)
const RATES = (flagValue('rates') ?? '200,500,1000').split(',').map(Number)
const SECONDS = flag('seconds', 10)
const TARGET_P99_MS = 20

const GOAL = 'Fix the off-by-one error in src/pagination.ts so the last page of GET /items is not empty, and add a regression test'
const COMMANDS = ['npm test -- pagination', 'git diff src/pagination.ts', 'npx tsc --noEmit', 'rg "lastPage" src', 'npm run lint', 'git status']
const FILES = ['src/pagination.ts', 'src/items/routes.ts', 'test/pagination.test.ts', 'src/items/service.ts', 'README.md']

/** The i-th tool event of a session: a PreToolUse, then the PostToolUse of the same call (every 12th a TodoWrite). */
function toolEvent(session: string, n: number, rand: () => number): Record<string, unknown> {
  const call = Math.floor(n / 2)
  const base = { session_id: session, transcript_path: `/home/dev/.claude/projects/api/${session}.jsonl`, cwd: '/home/dev/api', permission_mode: 'default', tool_use_id: `toolu_${call}` }
  const todo = call % 12 === 11
  const tool = todo
    ? {
        tool_name: 'TodoWrite',
        tool_input: {
          todos: [
            { content: 'Reproduce the empty last page', status: 'completed', activeForm: 'x' },
            { content: 'Fix lastPage', status: call % 24 === 23 ? 'completed' : 'in_progress', activeForm: 'x' },
            { content: 'Add a regression test', status: 'pending', activeForm: 'x' },
          ],
        },
      }
    : rand() < 0.5
      ? { tool_name: 'Bash', tool_input: { command: COMMANDS[Math.floor(rand() * COMMANDS.length)], description: 'Run it' } }
      : { tool_name: 'Read', tool_input: { file_path: `/home/dev/api/${FILES[Math.floor(rand() * FILES.length)]}` } }
  if (n % 2 === 0) return { ...base, hook_event_name: 'PreToolUse', ...tool }
  const output = `line ${call}: ${'export function lastPage(total, size) { return Math.floor(total / size) }\n'.repeat(1 + Math.floor(rand() * 20))}`
  const response =
    tool.tool_name === 'Bash'
      ? { stdout: output, stderr: '', interrupted: false, isImage: false }
      : tool.tool_name === 'Read'
        ? { type: 'text', file: { filePath: 'x', content: output } }
        : { oldTodos: [], newTodos: [] }
  return { ...base, hook_event_name: 'PostToolUse', ...tool, tool_response: response, duration_ms: 12 }
}

async function main(): Promise<void> {
  buildDist()
  const server = await startGoalkeeper()
  try {
    const api_key = await createAgent(server)
    const headers = { authorization: `Bearer ${api_key}` }
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `cc-bench-${i}`)
    for (const s of sessions) {
      const r = await fetch(`${server.baseUrl}/v1/hooks/claude-code`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: s, hook_event_name: 'UserPromptSubmit', prompt: GOAL, cwd: '/home/dev/api' }),
      })
      if (r.status !== 200) throw new Error(`opening ${s}: ${r.status}`)
    }
    console.log(`hooks: ${SESSIONS} Claude Code sessions, PreToolUse / PostToolUse round-robin, open loop, ${SECONDS} s per rate (target p99 ≤ ${TARGET_P99_MS} ms)`)
    const counters = new Map<string, number>(sessions.map((s) => [s, 0]))
    for (const rate of RATES) {
      const rand = prng(rate)
      const r = await openLoop({
        baseUrl: server.baseUrl,
        rate,
        seconds: SECONDS,
        request: (i) => {
          const session = sessions[i % SESSIONS]!
          const n = counters.get(session)!
          counters.set(session, n + 1)
          return { method: 'POST', path: '/v1/hooks/claude-code', headers, body: JSON.stringify(toolEvent(session, n, rand)) }
        },
      })
      const bad = [...r.statuses].filter(([s]) => s !== 200).map(([s, n]) => `${n}× ${s}`)
      const p99 = quantile(r.latencies, 0.99)
      console.log(
        `  ${String(rate).padStart(5)}/s  ${latencyLine(r)}  ${p99 <= TARGET_P99_MS ? 'meets' : 'misses'} the target${bad.length > 0 ? `  (${bad.join(', ')})` : ''}${r.maxLag > 5 ? `  generator lag ${r.maxLag.toFixed(0)} ms` : ''}`,
      )
    }
    console.log(`  peak RSS ${(server.peakRss() / 1024 / 1024).toFixed(1)} MB`)
  } finally {
    await server.stop()
  }
}

await main()
