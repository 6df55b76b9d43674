/**
 * Figures for the context builders (not a timed test): median µs per call over many runs.
 * `npx tsx bench/context.bench.ts`. Cold = every call sees new text (no memo hits); warm = an
 * agent's usual case, where goal, pitfalls and most todos repeat from the previous call.
 */
import { GoalReminderInjector, InjectionBudgetManager, RecitationManager } from '../src/engine/index.js'
import { loadavg } from 'node:os'
import { countTokens } from '../src/engine/similarity/text.js'
import type { RecitationState, TodoItem } from '../src/engine/context/recitation.js'

function medianMicros(fn: (i: number) => void, runs = 21, perRun = 5000): number {
  for (let i = 0; i < perRun; i++) fn(i) // warm-up
  const samples: number[] = []
  let k = 0
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < perRun; i++) fn(k++)
    samples.push(Number(process.hrtime.bigint() - t0) / perRun / 1000)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

const rows: Array<[string, number]> = []
const row = (name: string, us: number) => rows.push([name, us])

const injector = new GoalReminderInjector({ clock: () => 0 })
injector.setGoal('Build a REST API for user management with JWT authentication and rate limiting')
injector.recordPitfall("Don't use deprecated ORM methods")
injector.recordTriedApproach('Tried SQLAlchemy, too complex')
const progress = (i: number) => ({ current_step: i % 10, total_steps: 10, progress_pct: (i % 10) / 10, current_sub_goal: 'Add login endpoint' })
row(
  'buildReminder full, warm',
  medianMicros((i) => injector.buildReminder({ progress: progress(i), drift_score: (i % 50) / 100, turn_number: 3 })),
)
row(
  'buildReminder compact, warm',
  medianMicros((i) => injector.buildReminder({ progress: progress(i), drift_score: 0.35, turn_number: 10 })),
)
row(
  'buildReminder ultra, warm',
  medianMicros((i) => injector.buildReminder({ progress: progress(i), turn_number: 20 })),
)
row(
  'buildReminder full, cold (new sub-goal each call)',
  medianMicros((i) => injector.buildReminder({ progress: { ...progress(i), current_sub_goal: `Add endpoint ${i}` }, turn_number: 3 }), 9, 500),
)

const todos: TodoItem[] = Array.from({ length: 20 }, (_, i) => ({
  content: `Implement feature ${i}: handler, validation and tests`,
  status: i < 8 ? 'completed' : i < 10 ? 'in_progress' : 'pending',
}))
const state = (i: number): RecitationState => ({
  iteration: i,
  goal: 'Implement user authentication with JWT tokens',
  plan_tasks: [
    { description: 'Design schema', status: 'completed' },
    { description: 'Add password hashing middleware', status: 'in_progress' },
    { description: 'Implement refresh token rotation', status: 'pending' },
  ],
  todos,
  active_files: ['src/auth/middleware.ts', 'src/auth/jwt.ts'],
})
const recitation = new RecitationManager()
const sample = recitation.buildRecitation(state(1))!
row(
  'buildRecitation 20 todos, warm',
  medianMicros((i) => recitation.buildRecitation(state(i))),
)
row(
  'buildRecitation 20 todos, cold (a todo changes each call)',
  medianMicros(
    (i) => {
      const s = state(i)
      s.todos = todos.map((t, j) => (j === 8 ? { ...t, content: `Implement feature ${i}` } : t))
      recitation.buildRecitation(s)
    },
    9,
    500,
  ),
)
row(
  `countTokens of that recitation (${countTokens(sample)} tokens), repeated string`,
  medianMicros(() => countTokens(sample), 9, 500),
)

const budget = new InjectionBudgetManager()
const parts = [
  { name: 'goal_reminder', priority: 1, content: injector.buildReminder({ turn_number: 3 }).text },
  { name: 'recitation', content: sample },
  { name: 'reminder', priority: 2, content: 'Standup at 10:00: post the status in #team' },
]
row(
  'countTokens of a 5-token string, new each call',
  medianMicros((i) => countTokens(`Add endpoint ${i}`), 9, 500),
)
row(
  'allocate 3 parts',
  medianMicros(() => budget.allocate(parts), 9, 500),
)

const width = Math.max(...rows.map(([n]) => n.length))
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on a shared machine: compare rows within one run`,
)
for (const [name, us] of rows) console.log(`${name.padEnd(width)}  ${us.toFixed(2).padStart(8)} µs`)
