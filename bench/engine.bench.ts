/**
 * Engine micro-benchmarks (`npm run bench`): median µs per op after warm-up, over many batches.
 * Figures, not tests; the machine is shared, so compare runs on the same machine only.
 * Other engine rows (buildReminder, buildRecitation, ...) go in the list below.
 */
import { GoalDNA } from '../src/engine/drift/goal-dna.js'
import { GoalTracker } from '../src/engine/session/goal-tracker.js'
import { fingerprint, jaccard, lexicalSimilarity, STOP_WORDS, tokenSet, trigramSet, type Fingerprint } from '../src/engine/similarity/text.js'
import { bench, report } from './harness.js'

// 60-char goal, 200-char actions: the shapes the targets are stated for.
const GOAL = 'Build a REST API for user management with JWT authentication'
const ACTION =
  'Created the users table migration with id, email, password_hash and created_at columns, ' +
  'then wired the POST /users endpoint to validate the input body and return 201 with the new user id and email.'
// Distinct actions of the same length, so history, hashes and caches see realistic variety.
const ACTIONS = Array.from({ length: 64 }, (_, i) => `${ACTION.slice(0, 190)} step ${String(i).padStart(3, '0')}`)
const PLAN = ['Design the users schema', 'Implement the REST endpoints', 'Add JWT authentication', 'Write tests']

const goalPrint = fingerprint(GOAL)
const dna = new GoalDNA(GOAL)
let tracker = new GoalTracker(GOAL)
tracker.setPlan(PLAN)
let i = 0

bench('lexicalSimilarity (60-char goal vs 200-char action)', () => lexicalSimilarity(goalPrint, ACTION), { target: 5 })
bench('GoalDNA.checkDrift', () => dna.checkDrift(i, ACTIONS[i++ & 63]!), { target: 10 })
bench(
  'GoalTracker.verifyStepSync',
  () => {
    if ((++i & 1023) === 0) {
      tracker = new GoalTracker(GOAL)
      tracker.setPlan(PLAN)
    }
    return tracker.verifyStepSync(ACTIONS[i & 63]!.slice(0, 60), ACTIONS[(i + 7) & 63]!)
  },
  { target: 30 },
)
// The implementation before the one-pass scan (regex tokens, Sets), as a same-run baseline.
const TOKEN_RE = /[a-z_][a-z0-9_]*/g
const regexTokenSet = (text: string) => {
  const out = new Set<string>()
  for (const m of text.toLowerCase().matchAll(TOKEN_RE)) if (m[0].length > 2 && !STOP_WORDS.has(m[0])) out.add(m[0])
  return out
}
const setBased = (goal: Fingerprint, text: string) => {
  const tokens = regexTokenSet(text)
  if (goal.tokens.size === 0 || tokens.size === 0) return 0.5
  return 0.7 * jaccard(goal.tokens, tokens) + 0.3 * jaccard(goal.trigrams, trigramSet(text))
}
// The HTTP path: restore a session's state from its JSON snapshot, check one action, snapshot again.
const dnaJson = JSON.parse(JSON.stringify(dna.toJSON()))
bench('GoalDNA fromJSON + check + toJSON (per request)', () => {
  const d = GoalDNA.fromJSON(dnaJson)
  d.check(i, ACTIONS[i++ & 63]!)
  return d.toJSON()
})
const trackerJson = JSON.parse(JSON.stringify(tracker.toJSON()))
bench('GoalTracker fromJSON + verifyStepSync + toJSON (per request)', () => {
  const t = GoalTracker.fromJSON(trackerJson)
  t.verifyStepSync(ACTIONS[i & 63]!.slice(0, 60), ACTIONS[(i++ + 7) & 63]!)
  return t.toJSON()
})
bench('  baseline: regex + Set similarity (previous code)', () => setBased(goalPrint, ACTION))
bench('tokenSet (200 chars, builds a Set)', () => tokenSet(ACTION))
bench('trigramSet (200 chars, builds a Set)', () => trigramSet(ACTION))

report(`engine (goal ${GOAL.length} chars, action ${ACTION.length} chars)`)
