import { GOAL_TEXT_MAX } from '../engine/session/agent-turn.js'
import { Type, type Static } from 'typebox'
import { Body, Defaulted, Id, JsonObjectInput, ListOf, PaginationQuery, Timestamp, type JsonLimits } from '../schemas.js'
import { EXAMPLE_GOAL, EXAMPLE_PLAN } from './examples.js'
import {
  DetectionConfig,
  DetectionConfigInput,
  LoopFinding,
  SpendReport,
  StepSignals,
  StepSignalsInput,
  UnknownTool,
  BusyStall,
  BudgetStall,
  AgentBudgetReport,
  SecondOpinionReport,
} from './detection-schemas.js'

/** TypeBox schemas of goal sessions: one per shape, used for validation, types and OpenAPI. */

const Unit = (description?: string) => Type.Number({ minimum: 0, maximum: 1, ...(description ? { description } : {}) })
const Count = (max = 1_000_000) => Type.Integer({ minimum: 0, maximum: max })
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max })
/**
 * A goal is often an issue text or a user's first prompt, a step's description a model's whole
 * thought: real coding-agent runs carry goals up to 8,000 characters and thoughts up to 13,500.
 */
const ACTION_MAX = 50_000

export const SessionParams = Type.Object({ id: Id('ses') })

export const GoalState = Type.Object(
  {
    original_goal: Type.String(),
    current_step: Type.Integer(),
    total_steps_planned: Type.Integer(),
    progress: Type.Number(),
    drift_score: Type.Number(),
    loop_detected: Type.Boolean(),
    loop_count: Type.Integer(),
    stall_turns: Type.Integer(),
    timestamp: Timestamp,
  },
  { title: 'GoalState' },
)

const RecitationSource = Type.Union([Type.Literal('goal'), Type.Literal('plan'), Type.Literal('todo'), Type.Literal('memory')])
const SimilarityMode = Type.Union([Type.Literal('lexical'), Type.Literal('enhanced'), Type.Literal('embeddings')], {
  description:
    'Drift similarity: the token + trigram Jaccard fingerprint, lexical (default, threshold 0.15), the IDF-weighted word and n-gram cosine (threshold 0.115), ' +
    "or the cosine of the configured embeddings provider's vectors (threshold 0.25; needs GOALKEEPER_EMBEDDINGS_URL, else 400; " +
    'a check whose provider call fails uses `enhanced`).',
})
const Frequency = Type.Union([Type.Integer({ minimum: 0, maximum: 10_000 }), Type.Literal('adaptive')])

const SessionConfig = Type.Object(
  {
    similarity: SimilarityMode,
    drift_threshold: Type.Number(),
    consecutive_limit: Type.Integer(),
    history_size: Type.Integer(),
    full_cutoff: Type.Integer(),
    compact_cutoff: Type.Integer(),
    max_pitfalls: Type.Integer(),
    max_tried: Type.Integer(),
    drift_warning_threshold: Type.Number(),
    recitation: Type.Object({ frequency: Frequency, sources: Type.Array(RecitationSource), max_tokens: Type.Integer() }),
    llm_verify: Type.Boolean(),
    ...DetectionConfig,
  },
  { title: 'SessionConfig' },
)

/** Every field optional, defaults from SESSION_CONFIG_DEFAULTS (session-config.ts). Unknown fields are rejected. */
export const SessionConfigInput = Type.Object(
  {
    similarity: Type.Optional(SimilarityMode),
    drift_threshold: Type.Optional(Unit('Similarity below this is drift (default 0.15 for lexical, 0.115 for enhanced, 0.25 for embeddings).')),
    consecutive_limit: Type.Optional(Count(1000)),
    history_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    full_cutoff: Type.Optional(Count()),
    compact_cutoff: Type.Optional(Count()),
    max_pitfalls: Type.Optional(Count(50)),
    max_tried: Type.Optional(Count(50)),
    drift_warning_threshold: Type.Optional(Unit()),
    recitation: Type.Optional(
      Type.Object(
        {
          frequency: Type.Optional(Frequency),
          sources: Type.Optional(Type.Array(RecitationSource, { maxItems: 4, uniqueItems: true })),
          max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 8000 })),
        },
        { additionalProperties: false },
      ),
    ),
    llm_verify: Type.Optional(Type.Boolean({ description: 'Ask the configured LLM when the heuristic alignment is below 0.7 (needs GOALKEEPER_LLM_URL, else 400).' })),
    ...DetectionConfigInput,
  },
  { additionalProperties: false, title: 'SessionConfigInput' },
)

/** The caller's own id for a session (a coding agent's session id), unique per agent. */
const ExternalId = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The caller's own id for the session, unique per agent (a coding agent's hook sessions carry its session id).",
})
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object, returned as given.' })
/** Room for labels and references (Stripe's metadata holds 50 keys of 500 characters), not for documents. */
export const METADATA_LIMITS: JsonLimits = { bytes: 16 * 1024, keys: 500, depth: 10 }
const MetadataInput = JsonObjectInput(METADATA_LIMITS, 'Free-form JSON object, returned as given.')
const PlanSteps = Type.Array(Text(2000), { maxItems: 500 })

export const Session = Type.Object(
  {
    id: Id('ses'),
    goal: Type.String(),
    plan: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
    config: SessionConfig,
    metadata: Metadata,
    state: GoalState,
    external_id: Type.Union([ExternalId, Type.Null()]),
    parent_id: Type.Union([Type.String(), Type.Null()], { description: "The session this one works for (a sub-agent's session names its parent's); null when none." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Session' },
)
export const SessionList = ListOf(Session, { title: 'SessionList' })

// No `config` in the example: the defaults are the sensible start (a sample built from the schema
// set drift_threshold 1 and max_tokens 1, which flags every step as drift and recites "**").
export const CreateSessionBody = Body(
  {
    goal: Text(GOAL_TEXT_MAX),
    plan: Type.Optional(PlanSteps),
    config: Type.Optional(SessionConfigInput),
    metadata: Type.Optional(MetadataInput),
    external_id: Type.Optional(ExternalId),
    parent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A session of the same agent this one works for (a sub-agent's session names its parent's)." })),
  },
  { examples: [{ goal: EXAMPLE_GOAL, plan: EXAMPLE_PLAN, metadata: { ticket: 'API-142' } }] },
)
export const UpdateSessionBody = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])), metadata: Type.Optional(MetadataInput) },
  { additionalProperties: false, minProperties: 1, examples: [{ metadata: { ticket: 'API-142', owner: 'search-team' } }] },
)
const SessionDigest = Type.Object(
  {
    session: Session,
    step_count: Type.Integer({ minimum: 0 }),
    last_step_at: Type.Union([Timestamp, Type.Null()]),
    last_action: Type.Union([Type.Literal('continue'), Type.Literal('adjust'), Type.Literal('replan'), Type.Literal('abort'), Type.Null()], {
      description: "The last step's recommended action; null before the first step.",
    }),
    recent_similarity: Type.Array(Type.Number(), { description: 'Drift similarity of the last 40 steps, oldest first.' }),
  },
  { title: 'SessionDigest' },
)
export const SessionDigestList = ListOf(SessionDigest, { title: 'SessionDigestList' })
export const SessionListQuery = Type.Object({
  ...PaginationQuery('ses').properties,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
  external_id: Type.Optional(ExternalId),
  parent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A parent session's id: its sub-agents' sessions." })),
})

export const SetGoalBody = Body({ goal: Text(GOAL_TEXT_MAX) }, { examples: [{ goal: `${EXAMPLE_GOAL}, and return 429 with a Retry-After header beyond that` }] })
export const SetPlanBody = Body({ steps: PlanSteps }, { examples: [{ steps: [...EXAMPLE_PLAN, 'Document the limit in the API reference'] }] })

// One `enum` rather than a union of literals: in responses the serializer writes it as a string,
// where an anyOf would run the JSON-schema validator on each branch of every reply.
const Severity = Type.Enum(['none', 'low', 'moderate', 'high', 'critical'], { type: 'string' })
const Action = Type.Enum(['continue', 'adjust', 'replan', 'abort'], { type: 'string' })

const StepVerification = Type.Object(
  {
    aligned: Type.Boolean(),
    alignment_score: Type.Number(),
    drift_delta: Type.Number(),
    progress_delta: Type.Number(),
    reasoning: Type.String(),
    recommended_action: Action,
    loop: Type.Optional(LoopFinding),
    spend: Type.Optional(SpendReport),
    unknown_tool: Type.Optional(UnknownTool),
    busy_stall: Type.Optional(BusyStall),
    budget_stall: Type.Optional(BudgetStall),
    agent_budget: Type.Optional(AgentBudgetReport),
    second_opinion: Type.Optional(SecondOpinionReport),
  },
  { title: 'StepVerification' },
)
export const DriftEvent = Type.Object({ step_number: Type.Integer(), similarity: Type.Number(), action_text: Type.String(), severity: Severity, timestamp: Timestamp }, { title: 'DriftEvent' })
export const DriftEventList = ListOf(DriftEvent, { title: 'DriftEventList' })
export const DriftCheck = Type.Object(
  {
    similarity: Type.Number(),
    severity: Severity,
    drifting: Type.Boolean({ description: 'Sustained drift: consecutive drifts exceed consecutive_limit.' }),
    consecutive_drift_count: Type.Integer(),
    // `type: [object, null]` rather than anyOf: the response serializer then picks the branch with
    // a typeof check instead of running the JSON-schema validator (and its date-time check) per reply.
    event: Type.Unsafe<Static<typeof DriftEvent> | null>({ ...DriftEvent, type: ['object', 'null'] }),
    similarity_mode: Type.Optional(
      Type.Enum(['embeddings', 'enhanced'], {
        type: 'string',
        description: 'Only on sessions with similarity `embeddings`: the scorer this check used (`enhanced` when the provider failed).',
      }),
    ),
    similarity_fallback: Type.Optional(Type.String({ description: 'Why an `embeddings` check used `enhanced`.' })),
  },
  { title: 'DriftCheck' },
)
export const StepBody = Body(
  { description: Text(ACTION_MAX), output: Type.Optional(Type.String({ maxLength: 200_000 })), ...StepSignalsInput },
  {
    examples: [
      {
        description: 'Measured the current request rates per API key from the access logs',
        output: 'Peak: 340 requests per minute from one key; 95% of keys stay under 60 requests per minute.',
      },
    ],
  },
)
export const StepResult = Type.Object({ step_number: Type.Integer(), verification: StepVerification, drift: DriftCheck, state: GoalState }, { title: 'StepResult' })
const StepLogEntry = Type.Object(
  {
    step_number: Type.Integer(),
    description: Type.String(),
    output: Type.String(),
    ...StepSignals,
    verification: StepVerification,
    drift: DriftCheck,
    created_at: Timestamp,
  },
  { title: 'StepLogEntry' },
)
export const StepList = ListOf(StepLogEntry, { title: 'StepList' })

export const DriftCheckBody = Body(
  { action: Text(ACTION_MAX), step_number: Type.Optional(Count(1_000_000_000)) },
  { examples: [{ action: 'Add a token-bucket rate limiter keyed by API key to the search API middleware' }] },
)
export const DriftTrend = Type.Object(
  {
    direction: Type.Union([Type.Literal('improving'), Type.Literal('worsening'), Type.Literal('stable')]),
    average_similarity: Type.Number(),
    min_similarity: Type.Number(),
    max_similarity: Type.Number(),
    consecutive_drifts: Type.Integer(),
    total_drift_events: Type.Integer(),
    trend_slope: Type.Number(),
  },
  { title: 'DriftTrend' },
)
export const TrendQuery = Type.Object({ window: Defaulted(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })) })

// Shared by pitfalls and tried approaches: the example reads as either.
export const TextBody = Body({ text: Text(2000) }, { examples: [{ text: 'Counting requests per IP address: clients behind one proxy share one limit' }] })
export const Pitfalls = Type.Object({ pitfalls: Type.Array(Type.String()) }, { title: 'Pitfalls' })
export const TriedApproaches = Type.Object({ tried_approaches: Type.Array(Type.String()) }, { title: 'TriedApproaches' })

export const ReminderQuery = Type.Object({
  turn: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: "The agent's current turn number.", examples: [5] }),
  drift_score: Type.Optional(Unit('Overrides the live drift score.')),
  is_drift_active: Type.Optional(Type.Boolean()),
  summary: Type.Optional(Text(2000)),
  current_sub_goal: Type.Optional(Text(2000)),
})
/** The same fields as the query, for the POST that records the reminder. */
export const ReminderBody = Body(ReminderQuery.properties, { examples: [{ turn: 5 }] })
export const GoalReminder = Type.Object(
  {
    text: Type.String(),
    mode: Type.Union([Type.Literal('full'), Type.Literal('compact'), Type.Literal('ultra_compact')]),
    token_estimate: Type.Integer(),
    turn_number: Type.Integer(),
    includes_drift_warning: Type.Boolean(),
    timestamp: Timestamp,
  },
  { title: 'GoalReminder' },
)

export const Summary = Type.Object(
  {
    goal: Type.String(),
    progress: Type.Number(),
    drift: Type.Number(),
    steps_completed: Type.Integer(),
    steps_planned: Type.Integer(),
    loops_detected: Type.Integer(),
    stall_turns: Type.Integer(),
    elapsed_seconds: Type.Number(),
    verifications: Type.Integer(),
    avg_alignment: Type.Number(),
    dna: Type.Object({
      token_count: Type.Integer(),
      total_checks: Type.Integer(),
      drift_events: Type.Integer(),
      trend_direction: Type.Union([Type.Literal('improving'), Type.Literal('worsening'), Type.Literal('stable')]),
      consecutive_drift_count: Type.Integer(),
    }),
    reminders: Type.Object({
      total_reminders: Type.Integer(),
      pitfalls_count: Type.Integer(),
      tried_approaches_count: Type.Integer(),
      history_size: Type.Integer(),
    }),
  },
  { title: 'SessionSummary' },
)
