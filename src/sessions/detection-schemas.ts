import { Type } from 'typebox'
import { JsonObjectInput, type JsonLimits } from '../schemas.js'
import { DEFAULT_LOOP_KINDS, DEFAULT_LOOP_THRESHOLDS, LOOP_KINDS, MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD } from '../engine/detection/loop-kinds.js'
import { DEFAULT_RESEND_UNCHANGED_AFTER } from '../engine/context/unchanged.js'
import { ALIGNMENT_MODES, NEW_SESSION_DETECTION } from '../engine/detection/detection-config.js'
import { TOOL_NAME_MAX, TOOLS_MAX } from '../engine/detection/unknown-tools.js'
import { DEFAULT_BUSY_AFTER, MAX_BUSY_AFTER, MIN_BUSY_AFTER } from '../engine/detection/busy-stall.js'
import { DEFAULT_WARN_AT, WARN_AT_MAX } from '../engine/detection/spend-budget.js'
import { DEFAULT_BUDGET_STALL, MAX_BUDGET_STALL_CALLS, MIN_BUDGET_STALL_CALLS } from '../engine/detection/budget-stall.js'
import { CONFIDENT, OPINION_DEFAULTS, OPINION_MAX, OPINION_MIN, OPINION_STEPS, UNSURE } from '../engine/detection/second-opinion.js'
import { ESCALATION_MODES, FORMER_IMMEDIATE } from '../engine/detection/escalation.js'

/** The most one step may report spending (the step columns hold it on both databases). */
export const STEP_TOKENS_MAX = 1_000_000_000
export const STEP_COST_MAX = 1_000_000

/**
 * TypeBox schemas of loop kinds, escalation, reminders that don't nag and budgets: the optional
 * step fields, the config fields and the verdict's additions (docs/detection.md).
 */

const LoopKind = Type.Enum([...LOOP_KINDS], {
  type: 'string',
  description:
    "repeat: the same step and result (the same words in the description, the tool call and the output's first 200 characters); error_repeat: the same action failing the same way; alternation: A/B/A/B… over the " +
    "threshold's steps; monologue: the same message (no tool) in a row; same_call: the same tool and arguments in a row, whatever came back; " +
    'same_result: the same call answered by the same result (uuids, timestamps, durations, pids, temporary paths masked), other steps between allowed; ' +
    'error_cascade: tool calls failing in a row across different calls; same_edit: the same call that writes a file, with the same arguments, in a row, whatever came back.',
})

/** A tool list: names, or prefixes ending in `*` (`mcp__github__*`). */
function ToolNames(description: string) {
  return Type.Array(Type.String({ minLength: 1, maxLength: TOOL_NAME_MAX }), { maxItems: TOOLS_MAX, description: `${description} A name ending in \`*\` stands for every tool it begins.` })
}

export const ToolsBody = Type.Object({ tools: ToolNames('The tools the agent has now.') }, { additionalProperties: false, examples: [{ tools: ['Read', 'Edit', 'Bash', 'Grep', 'mcp__github__*'] }] })
export const ToolsReply = Type.Object({ tools: Type.Array(Type.String()) }, { title: 'SessionTools' })

export const UnknownTool = Type.Object(
  {
    name: Type.String({ description: 'The tool called.' }),
    similar: Type.Array(Type.String(), { description: "The session's tools nearest to it (a typo, another casing), at most 3." }),
    count: Type.Integer({ description: 'Calls in a row to tools the session does not have, this one included.' }),
  },
  { title: 'UnknownTool', description: 'The step called a tool the session does not have (config.tools, or the list reported by PUT …/tools).' },
)

export const BusyStall = Type.Object(
  {
    count: Type.Integer({ description: 'Tool calls in a row without news, this one included.' }),
    since: Type.Integer({ description: 'The step number of the first of them.' }),
    advice: Type.String({ description: 'One sentence the model can act on.' }),
  },
  { title: 'BusyStall', description: 'Busy but going nowhere: tool calls in a row with no plan or todo item done, no new file, no answer not seen before (config.busy_after).' },
)

export const BudgetStall = Type.Object(
  {
    count: Type.Integer({ description: 'Tool calls in a row that wrote nothing, ran nothing and advanced no plan or todo item, this one included.' }),
    since: Type.Integer({ description: 'The step number of the first of them.' }),
    budget_fraction: Type.Number({ description: 'The budget fraction spent after this step.' }),
    advice: Type.String({ description: 'One sentence the model can act on.' }),
  },
  { title: 'BudgetStall', description: 'Past a share of the budget, tool calls in a row that only read, searched or tidied up (config.budget_stall).' },
)

const BudgetStallInput = Type.Union(
  [
    Type.Literal(false),
    Type.Object(
      {
        at: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: `The budget fraction from which it answers (default ${DEFAULT_BUDGET_STALL.at}).` })),
        calls: Type.Optional(
          Type.Integer({ minimum: MIN_BUDGET_STALL_CALLS, maximum: MAX_BUDGET_STALL_CALLS, description: `Tool calls in a row that only read (default ${DEFAULT_BUDGET_STALL.calls}).` }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Reading on borrowed money: with at least `at` of the budget spent, `calls` tool calls in a row that wrote no file, ran nothing (no tests, no script) and advanced no plan or todo item ' +
      `answer replan (\`verification.budget_stall\`). Needs \`budget\`. A new session gets { at: ${DEFAULT_BUDGET_STALL.at}, calls: ${DEFAULT_BUDGET_STALL.calls} }; false turns it off; a session stored without it is not watched.`,
  },
)

const thresholds = Object.fromEntries(
  LOOP_KINDS.map((k) => [k, Type.Optional(Type.Integer({ minimum: MIN_LOOP_THRESHOLD[k], maximum: MAX_LOOP_THRESHOLD, description: `Default ${DEFAULT_LOOP_THRESHOLDS[k]}.` }))]),
)

/** Warning thresholds of a budget (a session's, an agent's daily). */
export const WarnAt = Type.Array(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }), {
  maxItems: WARN_AT_MAX,
  description: `Fractions of the budget whose crossing is a warning, ascending (default ${DEFAULT_WARN_AT.join(', ')}): in the verdict (\`warning\`, \`crossed\`) and one event per threshold crossed.`,
})

const Budget = Type.Object(
  {
    tokens: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Tokens the steps may report in all.' })),
    cost_usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Dollars the steps may report in all.' })),
    warn_at: Type.Optional(WarnAt),
    usd_per_million_tokens: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: "Costs a step that reports tokens but no cost_usd (a step's own cost_usd, the provider's figure, is preferred)." }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Spend allowed; each warning threshold crossed emits `session.budget_warning`; a step that reaches the budget answers `abort` and emits `session.budget_exceeded` (once).',
  },
)

const SecondOpinionInput = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: OPINION_MIN, maximum: OPINION_MAX, description: `Steps before the first opinion (default ${OPINION_DEFAULTS.after}).` })),
    every: Type.Optional(
      Type.Integer({
        minimum: OPINION_MIN,
        maximum: OPINION_MAX,
        description: `Steps between two opinions (default ${OPINION_DEFAULTS.every}); half as many after an unsure answer (confidence below ${UNSURE}, or a "no" the second call did not confirm).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      `A periodic second opinion of the configured LLM (GOALKEEPER_LLM_URL): it reads the goal and the last ${OPINION_STEPS} steps and answers whether the agent is making progress. ` +
      `A "no" with confidence ${CONFIDENT} or more, confirmed by a second call, answers replan with its analysis (\`verification.second_opinion\`). A provider that fails changes no verdict. Off when absent.`,
  },
)

export const SecondOpinionReport = Type.Object(
  {
    progress: Type.Boolean({ description: 'Whether the model finds the agent making progress.' }),
    confidence: Type.Number({ description: 'Its confidence, 0 to 1.' }),
    analysis: Type.String({ description: 'What it finds going wrong and what to do instead (may be empty).' }),
    confirmed: Type.Boolean({ description: `A "no" with confidence ${CONFIDENT} or more that a second call agreed with: the step answers at least replan.` }),
  },
  { title: 'SecondOpinion', description: "The LLM's second opinion, on a step it was asked for (config.second_opinion)." },
)

/** The detection fields of SessionConfigInput; stored and returned only when given. */
export const DetectionConfigInput = {
  loop_detection: Type.Optional(Type.Boolean({ description: 'false turns every loop kind off (default true).' })),
  loop_kinds: Type.Optional(
    Type.Array(LoopKind, {
      maxItems: LOOP_KINDS.length,
      uniqueItems: true,
      description: `Loop kinds checked. A new session gets ${NEW_SESSION_DETECTION.loop_kinds!.join(', ')} (stored in its config); a session stored without the field checks ${DEFAULT_LOOP_KINDS.join(', ')}.`,
    }),
  ),
  loop_thresholds: Type.Optional(Type.Object(thresholds, { additionalProperties: false, description: 'Per kind: repeats (alternation: steps) that make a loop.' })),
  loop_exempt_tools: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'Steps calling these tools are never part of a loop (e.g. polling a job status).' }),
  ),
  escalation: Type.Optional(
    Type.Enum([...ESCALATION_MODES, FORMER_IMMEDIATE], {
      type: 'string',
      description:
        'graduated (what a new session gets): a loop answers adjust, then replan twice, then abort while it continues; drift answers replan at most ' +
        '(unless drift_abort); abort is kept for problems that outlast a replan and a spent budget. immediate (a session stored without the field): ' +
        'every step answers from one table at once: a loop or drift >= 0.6 or a 5-turn stall replans, drift >= 0.3 adjusts, alignment < 0.3 aborts, ' +
        '< 0.5 adjusts. seed: the former name of immediate, still accepted (deprecated), stored as immediate.',
    }),
  ),
  alignment: Type.Optional(
    Type.Enum([...ALIGNMENT_MODES], {
      type: 'string',
      description:
        'evidence (what a new session gets): a step is read for what it shows about the goal (the files, symbols and errors it touches; ' +
        "housekeeping and test runs are neutral; one shared ordinary word is not evidence). keywords (a session stored without the field): the share of the goal's and the plan step's keywords the step mentions.",
    }),
  ),
  drift_abort: Type.Optional(Type.Boolean({ description: 'Graduated: drift still critical 3 steps after its replan answers abort (default false: replan at most).' })),
  drift_evidence: Type.Optional(
    Type.Boolean({
      description:
        "With alignment evidence, a step's drift check defers to its evidence where it knows better than the text: what the step touches or runs (and, under lexical, words that make it aligned). " +
        'true for a new session; false or absent (a session stored without the field): the text alone.',
    }),
  ),
  skip_unchanged: Type.Optional(Type.Boolean({ description: 'Hold back a goal reminder or recitation identical to the last one injected (default false).' })),
  resend_unchanged_after: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: `Turns after which an unchanged block goes out again (default ${DEFAULT_RESEND_UNCHANGED_AFTER}).` })),
  budget: Type.Optional(Budget),
  busy_after: Type.Optional(
    Type.Integer({
      minimum: MIN_BUSY_AFTER,
      maximum: MAX_BUSY_AFTER,
      description: `Busy but going nowhere: this many tool calls in a row with no plan or todo item done, no new file and no answer not seen before answer replan (\`verification.busy_stall\`, \`session.stalled\` with kind busy). A new session gets ${DEFAULT_BUSY_AFTER}; a session stored without it is not watched.`,
    }),
  ),
  budget_stall: Type.Optional(BudgetStallInput),
  tools: Type.Optional(
    ToolNames(
      'The tools the agent has: a step calling another is named at once (`verification.unknown_tool`) and answered adjust, replan when it goes on. `PUT …/tools` replaces it with the list the agent reports.',
    ),
  ),
  second_opinion: Type.Optional(SecondOpinionInput),
}

/** The same fields as a stored session returns them. */
export const DetectionConfig = {
  loop_detection: Type.Optional(Type.Boolean()),
  loop_kinds: Type.Optional(Type.Array(LoopKind)),
  loop_thresholds: Type.Optional(Type.Object(Object.fromEntries(LOOP_KINDS.map((k) => [k, Type.Optional(Type.Integer())])))),
  loop_exempt_tools: Type.Optional(Type.Array(Type.String())),
  escalation: Type.Optional(Type.Enum([...ESCALATION_MODES], { type: 'string' })),
  alignment: Type.Optional(Type.Enum([...ALIGNMENT_MODES], { type: 'string' })),
  drift_abort: Type.Optional(Type.Boolean()),
  drift_evidence: Type.Optional(Type.Boolean()),
  skip_unchanged: Type.Optional(Type.Boolean()),
  resend_unchanged_after: Type.Optional(Type.Integer()),
  budget: Type.Optional(
    Type.Object({
      tokens: Type.Optional(Type.Number()),
      cost_usd: Type.Optional(Type.Number()),
      warn_at: Type.Optional(Type.Array(Type.Number())),
      usd_per_million_tokens: Type.Optional(Type.Number()),
    }),
  ),
  tools: Type.Optional(Type.Array(Type.String())),
  busy_after: Type.Optional(Type.Integer()),
  budget_stall: Type.Optional(Type.Union([Type.Literal(false), Type.Object({ at: Type.Optional(Type.Number()), calls: Type.Optional(Type.Integer()) })])),
  second_opinion: Type.Optional(Type.Object({ after: Type.Optional(Type.Integer()), every: Type.Optional(Type.Integer()) })),
}

/** A tool call's arguments may carry a file's content; the step's output allows 200,000 characters. */
export const TOOL_ARGS_LIMITS: JsonLimits = { bytes: 64 * 1024, keys: 1000, depth: 16 }

/** The optional step fields beside description and output. */
export const StepSignalsInput = {
  tool: Type.Optional(
    Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 200 }),
        args: JsonObjectInput(TOOL_ARGS_LIMITS, "The call's arguments, a JSON object."),
      },
      { additionalProperties: false, description: 'The tool call this step made: the loop kinds, the exemptions and evidence read it.' },
    ),
  ),
  error: Type.Optional(Type.Boolean({ description: 'The step failed (its output is an error): `error_repeat` reads it.' })),
  tokens: Type.Optional(Type.Integer({ minimum: 0, maximum: STEP_TOKENS_MAX, description: 'Tokens this step spent.' })),
  cost_usd: Type.Optional(Type.Number({ minimum: 0, maximum: STEP_COST_MAX, description: 'Dollars this step spent.' })),
}

/** The same fields in the step log. */
export const StepSignals = {
  tool: Type.Optional(Type.Object({ name: Type.String(), args: Type.Record(Type.String(), Type.Unknown()) })),
  error: Type.Optional(Type.Boolean()),
  tokens: Type.Optional(Type.Integer()),
  cost_usd: Type.Optional(Type.Number()),
}

export const LoopFinding = Type.Object(
  {
    kind: LoopKind,
    steps: Type.Array(Type.Integer(), { description: 'Step numbers involved, oldest first.' }),
    count: Type.Integer(),
    subject: Type.String({ description: 'What repeats: the tool call or the start of the step.' }),
    advice: Type.String({ description: 'One sentence the model can act on.' }),
  },
  { title: 'LoopFinding', description: 'The loop this step completed or continued.' },
)

export const SpendReport = Type.Object(
  {
    tokens: Type.Number(),
    cost_usd: Type.Number(),
    // `type: [number, null]` rather than anyOf: the reply serializer then needs no validator.
    budget_fraction: Type.Unsafe<number | null>({ type: ['number', 'null'], description: 'Spent / budget (the larger over tokens and cost_usd); null without a budget.' }),
    runaway: Type.Boolean({ description: "The last 5 steps spent at least twice the session's average rate while the plan did not move." }),
    warning: Type.Optional(Type.Number({ description: 'The highest warning threshold (budget.warn_at) reached so far.' })),
    crossed: Type.Optional(Type.Array(Type.Number(), { description: 'The warning thresholds this step crossed.' })),
  },
  { title: 'SpendReport', description: 'On sessions with a budget or steps reporting tokens / cost_usd.' },
)

export const AgentBudgetReport = Type.Object(
  {
    day: Type.String({ description: "The day counted, in the agent's timezone (YYYY-MM-DD)." }),
    tokens: Type.Number({ description: 'Tokens all sessions of the agent reported that day.' }),
    cost_usd: Type.Number({ description: 'Dollars all sessions of the agent reported that day.' }),
    budget_fraction: Type.Number({ description: 'Spent / daily budget, the larger over tokens and cost_usd.' }),
    warning: Type.Optional(Type.Number({ description: 'The highest warning threshold reached that day.' })),
    crossed: Type.Optional(Type.Array(Type.Number(), { description: 'The warning thresholds this step crossed.' })),
  },
  { title: 'AgentBudgetReport', description: "The agent's daily budget (settings `daily_budget`), on steps that spend: `abort` once it is spent." },
)

export const UnchangedSkip = Type.Object(
  {
    reason: Type.Literal('unchanged'),
    last_injected_at: Type.Integer({ description: 'The turn (iteration) the identical block was last injected at.' }),
    resend_at: Type.Integer({ description: 'The turn from which it goes out again even if unchanged.' }),
  },
  { title: 'UnchangedSkip', description: 'skip_unchanged held back a block identical to the last one injected.' },
)
