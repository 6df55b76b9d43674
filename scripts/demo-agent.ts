/**
 * A scripted agent for the newcomer demo (`npm run demo`, scripts/demo.ts): it opens a goal
 * session over the public REST API, posts a run that starts on track, then drifts and loops, and
 * prints each verdict with a one-line explanation, then the goal reminder and the recitation
 * block it would inject into its next LLM call. Plain fetch, plain console text.
 */

export const DEMO_GOAL = 'Build a REST API for user management with JWT authentication'
export const DEMO_PLAN = ['design the user schema', 'implement signup and login endpoints with JWT', 'write tests for the auth endpoints']

/** On track for three steps, then off-goal: the same distraction three times (a loop), then more. */
export const DEMO_RUN: { description: string; output?: string }[] = [
  { description: 'design the user schema with email and roles', output: 'users table migration created' },
  { description: 'implement signup and login endpoints with JWT', output: 'POST /signup and POST /login return tokens' },
  { description: 'write tests for login and expired JWT tokens', output: '12 tests pass' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'watch football highlights while the build runs' },
]

export interface DemoOptions {
  baseUrl: string
  apiKey: string
  /** Where lines go (console.log in the CLI, an array in tests). */
  log?: (line: string) => void
}

export interface DemoResult {
  sessionId: string
  actions: string[]
}

export class DemoHttpError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

interface StepResult {
  step_number: number
  verification: { aligned: boolean; alignment_score: number; reasoning: string; recommended_action: string }
  drift: { similarity: number; severity: string; drifting: boolean; consecutive_drift_count: number }
  state: { drift_score: number; progress: number; loop_detected: boolean; stall_turns: number }
}

/** What each recommended action asks the agent to do (API.md "Steps: the per-step verdict"). */
const MEANING: Record<string, string> = {
  continue: 'on track: keep going with the plan',
  adjust: 'drifting: inject the goal reminder and steer back',
  replan: 'stop repeating or wandering: rebuild the plan from the goal',
  abort: 'nothing here serves the goal: stop and ask for help',
}

const pad = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n))

async function call<T>(opts: DemoOptions, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, opts.baseUrl), {
    method,
    headers: { authorization: `Bearer ${opts.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (!res.ok) {
    let detail = text
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? text
    } catch {
      // not JSON: keep the raw text
    }
    throw new DemoHttpError(res.status, `${method} ${path} → ${res.status}: ${detail}`)
  }
  return (text ? JSON.parse(text) : undefined) as T
}

/** Runs the scripted agent against a running server and returns the verdict sequence. */
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const log = opts.log ?? ((line: string) => console.log(line))
  log(`Goal: ${DEMO_GOAL}`)
  DEMO_PLAN.forEach((s, i) => log(`  plan ${i + 1}. ${s}`))
  const session = await call<{ id: string }>(opts, 'POST', '/v1/sessions', { goal: DEMO_GOAL, plan: DEMO_PLAN, metadata: { source: 'demo' } })
  log(`Opened session ${session.id}\n`)
  log('The agent posts each step it takes (POST /v1/sessions/{id}/steps) and reads the verdict.')
  log('align = keyword alignment with goal and plan, drift = running drift score, sim/severity = lexical')
  log('similarity of the step to the goal and its drift severity; action = what the agent should do next.\n')
  log(`${'#'.padStart(2)}  ${pad('step', 48)} align  drift   sim  severity  action`)

  const actions: string[] = []
  let last: StepResult | undefined
  for (const step of DEMO_RUN) {
    const r = await call<StepResult>(opts, 'POST', `/v1/sessions/${session.id}/steps`, step)
    const v = r.verification
    actions.push(v.recommended_action)
    log(
      `${String(r.step_number).padStart(2)}  ${pad(step.description, 48)} ${v.alignment_score.toFixed(2).padStart(5)}  ` +
        `${r.state.drift_score.toFixed(2).padStart(5)}  ${r.drift.similarity.toFixed(2)}  ${pad(r.drift.severity, 8)}  ${v.recommended_action}`,
    )
    const flags = [r.state.loop_detected ? 'loop detected' : '', r.drift.drifting ? 'sustained drift' : ''].filter(Boolean)
    log(`    → ${MEANING[v.recommended_action] ?? v.recommended_action}${flags.length ? ` (${flags.join(', ')})` : ''}. ${v.reasoning}`)
    last = r
  }

  const turn = DEMO_RUN.length + 1
  log(`\nBefore its next LLM call the agent asks for a goal reminder (GET /v1/sessions/{id}/reminder?turn=${turn}):`)
  const reminder = await call<{ text: string; mode: string; token_estimate: number; includes_drift_warning: boolean }>(
    opts,
    'GET',
    `/v1/sessions/${session.id}/reminder?turn=${turn}`,
  )
  log(`  mode ${reminder.mode}, ${reminder.token_estimate} tokens${reminder.includes_drift_warning ? ', with a drift warning' : ''}:`)
  log(indent(reminder.text))

  // The recitation restates goal, plan and todos at the end of the context, where the model attends most.
  await call(opts, 'PUT', `/v1/sessions/${session.id}/context`, {
    plan_tasks: DEMO_PLAN.map((description, i) => ({ description, status: i < 2 ? 'completed' : 'in_progress' })),
    todos: [
      { content: 'cover expired and tampered JWT tokens in tests', status: 'in_progress' },
      { content: 'document the auth endpoints', status: 'pending' },
    ],
    recent_errors: last?.state.loop_detected ? ['repeated an off-goal step three times'] : [],
  })
  const iteration = 5
  log(`\nAnd the recitation block it would inject (GET /v1/sessions/{id}/recitation?iteration=${iteration}):`)
  const recitation = await call<{ should_inject: boolean; text: string | null; content: string | null; token_estimate: number }>(
    opts,
    'GET',
    `/v1/sessions/${session.id}/recitation?iteration=${iteration}`,
  )
  log(`  due now: ${recitation.should_inject ? 'yes' : 'no'}, ${recitation.token_estimate} tokens:`)
  log(indent(recitation.text ?? recitation.content ?? '(empty)'))
  log(`\nVerdicts: ${actions.join(' → ')}`)
  return { sessionId: session.id, actions }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  | ${l}`)
    .join('\n')
}
