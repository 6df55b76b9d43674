/**
 * The opt-in detection fields of a session's config (loops, escalation, reminders that don't nag,
 * budget). All optional and stored only when given, so a session created without them (or before
 * them) keeps answering as it did: `immediate` escalation, `keywords` alignment, the loop kinds of
 * DEFAULT_LOOP_KINDS; the defaults are applied where they are used.
 */
import { budgetProblem, type SessionBudget } from './spend-budget.js'
import { ESCALATION_MODES, type EscalationMode } from './escalation.js'
import { DEFAULT_LOOP_KINDS, DEFAULT_LOOP_THRESHOLDS, isLoopKind, LOOP_KINDS, MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD, type LoopKind, type LoopSettings } from './loop-kinds.js'
import { DEFAULT_RESEND_UNCHANGED_AFTER } from '../context/unchanged.js'
import { TOOL_NAME_MAX, ToolList, TOOLS_MAX } from './unknown-tools.js'
import { DEFAULT_BUSY_AFTER, MAX_BUSY_AFTER, MIN_BUSY_AFTER } from './busy-stall.js'
import { opinionProblem, type SecondOpinionConfig } from './second-opinion.js'
import { budgetStallProblem, DEFAULT_BUDGET_STALL, type BudgetStallConfig } from './budget-stall.js'
import { defined } from '../defined.js'

export interface DetectionConfig {
  /** false turns every loop kind off (default true). */
  loop_detection?: boolean
  /** The loop kinds checked (absent: repeat, error_repeat, same_call, as sessions stored before the field; a new session stores NEW_SESSION_DETECTION's). */
  loop_kinds?: LoopKind[]
  /** Repeats (for alternation: steps) that make a loop, per kind. */
  loop_thresholds?: Partial<Record<LoopKind, number>>
  /** Steps calling these tools are never part of a loop (polling a job's status is not a loop). */
  loop_exempt_tools?: string[]
  escalation?: EscalationMode
  /**
   * How the verdict scores a step: `keywords`, the share of goal and plan keywords the step mentions; `evidence`, what the
   * step shows about the goal (step-evidence.ts). Absent: `keywords` (sessions created before it).
   */
  alignment?: AlignmentMode
  /** Graduated escalation: drift still critical after a replan answers `abort` (default false: drift alone answers `replan` at most). */
  drift_abort?: boolean
  /**
   * With evidence alignment, a step's drift check defers to its evidence where it knows better than
   * the text (goal-session.ts `readStep`). Absent: the text alone (sessions created before it).
   */
  drift_evidence?: boolean
  skip_unchanged?: boolean
  resend_unchanged_after?: number
  budget?: SessionBudget
  /** The tools the agent has: a call to another is named at once (unknown-tools.ts; `*` at the end: a prefix). */
  tools?: string[]
  /** Tool calls in a row without news that make a busy stall (busy-stall.ts); absent: not watched. */
  busy_after?: number
  /**
   * Past `at` of the budget, `calls` tool calls in a row that only read (budget-stall.ts); false:
   * not watched; absent: not watched (sessions stored before it). Needs a budget to answer.
   */
  budget_stall?: BudgetStallConfig | false
  /** A periodic second opinion of the configured LLM (second-opinion.ts); absent: none. */
  second_opinion?: SecondOpinionConfig
}

export type AlignmentMode = 'keywords' | 'evidence'
export const ALIGNMENT_MODES: readonly AlignmentMode[] = ['keywords', 'evidence']

/**
 * What a session created now gets for the fields it leaves out, stored with it (so its config
 * says what it uses); a session stored without them keeps the answers it was created with.
 * Chosen on the real runs of bench:detection (docs/detection.md). `same_call` (whatever came
 * back) is left to those who list it: the same call whose answer changes is polling or progress;
 * what it caught on the real runs, the same edit applied again and again, is `same_edit`'s.
 */
export const NEW_SESSION_DETECTION: Readonly<DetectionConfig> = {
  escalation: 'graduated',
  alignment: 'evidence',
  drift_evidence: true,
  loop_kinds: ['repeat', 'error_repeat', 'same_result', 'error_cascade', 'same_edit'],
  busy_after: DEFAULT_BUSY_AFTER,
  budget_stall: { ...DEFAULT_BUDGET_STALL },
}

/**
 * The loop kinds to give sessions a coding agent's hooks create, whose steps are tool calls with
 * their outputs: `repeat` is left out (its step text is the call itself, which same_result and
 * same_edit already read, and a rerun of the tests after an edit is not a loop).
 */
export const HOOK_LOOP_KINDS: readonly LoopKind[] = ['error_repeat', 'same_result', 'error_cascade', 'same_edit']

/** A field that makes the configuration unusable (session-config.ts SessionConfigError's shape). */
export type ConfigProblem = [field: string, message: string]

/** The first problem of the detection fields, or null. */
export function detectionProblem(c: DetectionConfig): ConfigProblem | null {
  if (c.loop_kinds !== undefined) {
    const bad = c.loop_kinds.findIndex((k) => !isLoopKind(k))
    if (bad >= 0) return [`loop_kinds/${bad}`, `must be one of ${LOOP_KINDS.join(', ')}`]
  }
  for (const [k, v] of Object.entries(c.loop_thresholds ?? {})) {
    if (v === undefined) continue
    if (!isLoopKind(k)) return [`loop_thresholds/${k}`, `is not a loop kind (${LOOP_KINDS.join(', ')})`]
    if (!(Number.isInteger(v) && v >= MIN_LOOP_THRESHOLD[k] && v <= MAX_LOOP_THRESHOLD)) {
      return [`loop_thresholds/${k}`, `must be an integer in [${MIN_LOOP_THRESHOLD[k]}, ${MAX_LOOP_THRESHOLD}]`]
    }
  }
  if (c.escalation !== undefined && !ESCALATION_MODES.includes(c.escalation)) return ['escalation', "must be 'immediate' or 'graduated'"]
  if (c.alignment !== undefined && !ALIGNMENT_MODES.includes(c.alignment)) return ['alignment', "must be 'keywords' or 'evidence'"]
  if (c.resend_unchanged_after !== undefined && !(Number.isInteger(c.resend_unchanged_after) && c.resend_unchanged_after >= 1)) {
    return ['resend_unchanged_after', 'must be an integer >= 1']
  }
  const budget = c.budget === undefined ? null : budgetProblem(c.budget, 'budget')
  if (budget !== null) return budget
  if (c.busy_after !== undefined && !(Number.isInteger(c.busy_after) && c.busy_after >= MIN_BUSY_AFTER && c.busy_after <= MAX_BUSY_AFTER)) {
    return ['busy_after', `must be an integer in [${MIN_BUSY_AFTER}, ${MAX_BUSY_AFTER}]`]
  }
  if (c.budget_stall !== undefined) {
    const b = budgetStallProblem(c.budget_stall)
    if (b !== null) return b
  }
  if (c.second_opinion !== undefined) {
    const o = opinionProblem(c.second_opinion)
    if (o !== null) return o
  }
  if (c.tools !== undefined) return toolsProblem(c.tools, 'tools')
  return null
}

/** The first problem of a tool list (config.tools, a reported list), or null. */
export function toolsProblem(tools: unknown, field: string): ConfigProblem | null {
  if (!Array.isArray(tools) || tools.length > TOOLS_MAX) return [field, `must be a list of at most ${TOOLS_MAX} tool names`]
  const bad = tools.findIndex((t) => typeof t !== 'string' || t === '' || t === '*' || t.length > TOOL_NAME_MAX)
  return bad < 0 ? null : [`${field}/${bad}`, `must be a tool name of 1 to ${TOOL_NAME_MAX} characters ('*' alone is not one)`]
}

/** A copy of the detection fields given (arrays and objects copied). */
export function copyDetection(c: DetectionConfig): DetectionConfig {
  const out: DetectionConfig = {}
  if (c.loop_detection !== undefined) out.loop_detection = c.loop_detection
  if (c.loop_kinds !== undefined) out.loop_kinds = [...new Set(c.loop_kinds)]
  if (c.loop_thresholds !== undefined) out.loop_thresholds = defined(c.loop_thresholds)
  if (c.loop_exempt_tools !== undefined) out.loop_exempt_tools = [...new Set(c.loop_exempt_tools)]
  if (c.escalation !== undefined) out.escalation = c.escalation
  if (c.alignment !== undefined) out.alignment = c.alignment
  if (c.drift_abort !== undefined) out.drift_abort = c.drift_abort
  if (c.drift_evidence !== undefined) out.drift_evidence = c.drift_evidence
  if (c.skip_unchanged !== undefined) out.skip_unchanged = c.skip_unchanged
  if (c.resend_unchanged_after !== undefined) out.resend_unchanged_after = c.resend_unchanged_after
  if (c.budget !== undefined) out.budget = { ...c.budget, ...(c.budget.warn_at === undefined ? {} : { warn_at: [...c.budget.warn_at] }) }
  if (c.tools !== undefined) out.tools = [...new Set(c.tools)]
  if (c.busy_after !== undefined) out.busy_after = c.busy_after
  if (c.budget_stall !== undefined) out.budget_stall = c.budget_stall === false ? false : { ...c.budget_stall }
  if (c.second_opinion !== undefined) out.second_opinion = { ...c.second_opinion }
  return out
}

/** What the detectors read, defaults filled in. */
export interface DetectionSettings {
  loops: LoopSettings
  graduated: boolean
  evidence: boolean
  /** Evidence alignment with `drift_evidence`: the step's drift check reads its evidence. */
  driftEvidence: boolean
  driftAbort: boolean
  skipUnchanged: boolean
  resendUnchangedAfter: number
  budget: SessionBudget | undefined
  tools: ToolList | null
  busyAfter: number | null
  budgetStall: Required<BudgetStallConfig> | null
}

export function detectionSettings(c: DetectionConfig): DetectionSettings {
  const kinds = c.loop_detection === false ? [] : (c.loop_kinds ?? DEFAULT_LOOP_KINDS)
  return {
    loops: {
      kinds: new Set(kinds),
      thresholds: { ...DEFAULT_LOOP_THRESHOLDS, ...defined(c.loop_thresholds) },
      exemptTools: new Set(c.loop_exempt_tools ?? []),
    },
    graduated: c.escalation === 'graduated',
    evidence: c.alignment === 'evidence',
    driftEvidence: c.alignment === 'evidence' && c.drift_evidence === true,
    driftAbort: c.drift_abort === true,
    skipUnchanged: c.skip_unchanged === true,
    resendUnchangedAfter: c.resend_unchanged_after ?? DEFAULT_RESEND_UNCHANGED_AFTER,
    budget: c.budget,
    tools: c.tools === undefined ? null : new ToolList(c.tools),
    busyAfter: c.busy_after ?? null,
    budgetStall: c.budget_stall === undefined || c.budget_stall === false ? null : { ...DEFAULT_BUDGET_STALL, ...defined(c.budget_stall) },
  }
}
