/**
 * A scripted agent for the newcomer demo (`npm run demo`, scripts/demo.ts): it opens a goal
 * session over the public REST API, posts a run that starts on track, then drifts and loops, and
 * prints each verdict with a one-line explanation, then the goal reminder and the recitation
 * block it would inject into its next LLM call. Plain fetch, plain console text.
 */

export const DEMO_GOAL = 'Build a REST API for user management with JWT authentication'
export const DEMO_PLAN = ['design the user schema', 'implement signup and login endpoints with JWT', 'write tests for the auth endpoints']
/**
 * `enhanced` similarity: with the default `lexical` mode (word and trigram overlap, threshold
 * 0.15) short on-plan steps that reword the goal score 0.03–0.10 and would be flagged as drift.
 */
export const DEMO_CONFIG = { similarity: 'enhanced' } as const

/**
 * Two plan steps done, then the agent wanders off instead of writing the tests: the same
 * distraction three times (a loop), and, after it replans, another distraction. Off-goal texts
 * share no word with the goal or the plan, so none of them counts as progress.
 */
export const DEMO_RUN: { description: string; output?: string }[] = [
  { description: 'design the user schema', output: 'users table: email, password hash, roles' },
  { description: 'implement signup and login endpoints with JWT', output: 'POST /signup and POST /login return tokens' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'browse cat pictures on reddit for inspiration' },
  { description: 'plan a weekend hiking trip: trails, weather forecast, campsite booking and a packing list of boots and tents' },
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

interface GoalState {
  current_step: number
  total_steps_planned: number
  drift_score: number
  progress: number
  loop_detected: boolean
  stall_turns: number
}

interface StepResult {
  step_number: number
  verification: { aligned: boolean; alignment_score: number; reasoning: string; recommended_action: string }
  drift: { similarity: number; severity: string; drifting: boolean; consecutive_drift_count: number }
  state: GoalState
}

/** What each recommended action asks the agent to do (`recommended_action` in openapi.yaml). */
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

/** Why this step's verdict is flagged: a loop (this step is the repeat) and sustained drift. */
function flagsOf(r: StepResult): string[] {
  const flags: string[] = []
  if (r.state.loop_detected) flags.push('loop detected: the same step 3 times')
  if (r.drift.drifting) flags.push(`sustained drift: ${r.drift.consecutive_drift_count} off-goal steps in a row`)
  return flags
}

/** Runs the scripted agent against a running server and returns the verdict sequence. */
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const log = opts.log ?? ((line: string) => console.log(line))
  log(`Goal: ${DEMO_GOAL}`)
  DEMO_PLAN.forEach((s, i) => log(`  plan ${i + 1}. ${s}`))
  const session = await call<{ id: string }>(opts, 'POST', '/v1/sessions', {
    goal: DEMO_GOAL,
    plan: DEMO_PLAN,
    config: DEMO_CONFIG,
    metadata: { source: 'demo' },
  })
  log(`Opened session ${session.id} with config ${JSON.stringify(DEMO_CONFIG)}: drift is scored by the enhanced`)
  log('similarity (word rarity and character n-grams; threshold 0.115) rather than the default lexical word overlap.\n')
  log('The agent posts each step it takes (POST /v1/sessions/{id}/steps) and reads the verdict.')
  log('align = what the step shows of the goal and plan (0.5 neutral); drift = the running drift score (off-goal steps')
  log("raise it: adjust from 0.3, replan from 0.6); sim/severity = the step's similarity to the goal and its drift")
  log('severity (enhanced pulls the scores of short texts toward 0.12, so a short off-goal step often grades only')
  log('low, a longer one moderate or worse); off = off-goal steps in a row (more than 3 is sustained drift).\n')
  log(`${'#'.padStart(2)}  ${pad('step', 48)} align  drift    sim  severity  off  action`)

  const actions: string[] = []
  let looped = false
  let last: StepResult | undefined
  for (const step of DEMO_RUN) {
    const r = await call<StepResult>(opts, 'POST', `/v1/sessions/${session.id}/steps`, step)
    const v = r.verification
    actions.push(v.recommended_action)
    log(
      `${String(r.step_number).padStart(2)}  ${pad(step.description, 48)} ${v.alignment_score.toFixed(2).padStart(5)}  ` +
        `${r.state.drift_score.toFixed(2).padStart(5)}  ${r.drift.similarity.toFixed(3)}  ${pad(r.drift.severity, 8)}  ` +
        `${String(r.drift.consecutive_drift_count).padStart(3)}  ${v.recommended_action}`,
    )
    const flags = flagsOf(r)
    log(`    → ${MEANING[v.recommended_action] ?? v.recommended_action}${flags.length ? ` (${flags.join('; ')})` : ''}. ${v.reasoning}`)
    if (r.state.loop_detected) {
      // The loop flag stays set until the agent says it replanned.
      looped = true
      await call(opts, 'POST', `/v1/sessions/${session.id}/loop/reset`)
      log('    The agent replans and clears the loop flag (POST /v1/sessions/{id}/loop/reset); drift is left as it is.')
    }
    last = r
  }

  const done = last?.state.current_step ?? 0
  const total = last?.state.total_steps_planned ?? DEMO_PLAN.length
  log(`\nPlan progress: ${done}/${total} steps done (only aligned, new steps advance the plan).`)

  const turn = DEMO_RUN.length + 1
  log(`\nBefore its next LLM call (turn ${turn}) the agent gets a goal reminder to inject, recorded as shown (POST /v1/sessions/{id}/reminder):`)
  const reminder = await call<{ text: string; mode: string; token_estimate: number; includes_drift_warning: boolean }>(opts, 'POST', `/v1/sessions/${session.id}/reminder`, { turn })
  log(`  mode ${reminder.mode}, ${reminder.token_estimate} tokens${reminder.includes_drift_warning ? ', with a drift warning' : ''}:`)
  log(indent(reminder.text))

  // The recitation restates goal, plan and todos at the end of the context, where the model attends
  // most. No plan_tasks are sent, so its plan progress is the session's own (the same as above).
  const context = {
    todos: [
      { content: 'cover expired and tampered JWT tokens in tests', status: 'pending' },
      { content: 'document the auth endpoints', status: 'pending' },
    ],
    recent_errors: looped ? ['repeated an off-goal step three times'] : [],
  }
  log(`\nIt tells the session its todos (PUT /v1/sessions/{id}/context; plan progress comes from the session):`)
  log(indent(JSON.stringify(context)))
  await call(opts, 'PUT', `/v1/sessions/${session.id}/context`, context)
  log(`\nAnd reads the recitation block it would inject (GET /v1/sessions/{id}/recitation?iteration=${turn}):`)
  const recitation = await call<{ should_inject: boolean; text: string | null; content: string | null; token_estimate: number }>(opts, 'GET', `/v1/sessions/${session.id}/recitation?iteration=${turn}`)
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
