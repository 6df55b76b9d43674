import { Type, type Static } from 'typebox'
import { Body, Id, ListOf, PaginationQuery, Timestamp } from '../schemas.js'

/** TypeBox schemas of API.md "Goal sessions": one per shape, used for validation, types and OpenAPI. */

const Unit = (description?: string) => Type.Number({ minimum: 0, maximum: 1, ...(description ? { description } : {}) })
const Count = (max = 1_000_000) => Type.Integer({ minimum: 0, maximum: max })
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max })

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
    'Drift similarity: the seed\'s lexical fingerprint (default, threshold 0.15), the IDF-weighted word and n-gram cosine (threshold 0.115), ' +
    'or the cosine of the configured embeddings provider\'s vectors (threshold 0.25; needs GOALKEEPER_EMBEDDINGS_URL, else 400; ' +
    'a check whose provider call fails uses `enhanced`).',
})
const Frequency = Type.Union([Type.Integer({ minimum: 0, maximum: 10_000 }), Type.Literal('adaptive')])

export const SessionConfig = Type.Object(
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
  },
  { title: 'SessionConfig' },
)

/** Every field optional; defaults from the seeds. Unknown fields are rejected. */
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
    llm_verify: Type.Optional(
      Type.Boolean({ description: 'Ask the configured LLM when the heuristic alignment is below 0.7 (needs GOALKEEPER_LLM_URL, else 400).' }),
    ),
  },
  { additionalProperties: false, title: 'SessionConfigInput' },
)

const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object, returned as given.' })
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
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Session' },
)
export const SessionList = ListOf(Session, { title: 'SessionList' })

export const CreateSessionBody = Body({
  goal: Text(4000),
  plan: Type.Optional(PlanSteps),
  config: Type.Optional(SessionConfigInput),
  metadata: Type.Optional(Metadata),
})
export const UpdateSessionBody = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])), metadata: Type.Optional(Metadata) },
  { additionalProperties: false, minProperties: 1 },
)
export const SessionListQuery = Type.Object({
  ...PaginationQuery('ses').properties,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
})

export const SetGoalBody = Body({ goal: Text(4000) })
export const SetPlanBody = Body({ steps: PlanSteps })

// One `enum` rather than a union of literals: in responses the serializer writes it as a string,
// where an anyOf would run the JSON-schema validator on each branch of every reply.
const Severity = Type.Enum(['none', 'low', 'moderate', 'high', 'critical'], { type: 'string' })
const Action = Type.Enum(['continue', 'adjust', 'replan', 'abort'], { type: 'string' })

export const StepVerification = Type.Object(
  {
    aligned: Type.Boolean(),
    alignment_score: Type.Number(),
    drift_delta: Type.Number(),
    progress_delta: Type.Number(),
    reasoning: Type.String(),
    recommended_action: Action,
  },
  { title: 'StepVerification' },
)
export const DriftEvent = Type.Object(
  { step_number: Type.Integer(), similarity: Type.Number(), action_text: Type.String(), severity: Severity, timestamp: Timestamp },
  { title: 'DriftEvent' },
)
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
export const StepBody = Body({ description: Text(10_000), output: Type.Optional(Type.String({ maxLength: 200_000 })) })
export const StepResult = Type.Object(
  { step_number: Type.Integer(), verification: StepVerification, drift: DriftCheck, state: GoalState },
  { title: 'StepResult' },
)
export const StepLogEntry = Type.Object(
  {
    step_number: Type.Integer(),
    description: Type.String(),
    output: Type.String(),
    verification: StepVerification,
    drift: DriftCheck,
    created_at: Timestamp,
  },
  { title: 'StepLogEntry' },
)
export const StepList = ListOf(StepLogEntry, { title: 'StepList' })

export const DriftCheckBody = Body({ action: Text(10_000), step_number: Type.Optional(Count(1_000_000_000)) })
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
export const TrendQuery = Type.Object({ window: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }) })

export const TextBody = Body({ text: Text(2000) })
export const Pitfalls = Type.Object({ pitfalls: Type.Array(Type.String()) }, { title: 'Pitfalls' })
export const TriedApproaches = Type.Object({ tried_approaches: Type.Array(Type.String()) }, { title: 'TriedApproaches' })

export const ReminderQuery = Type.Object({
  turn: Count(1_000_000_000),
  drift_score: Type.Optional(Unit('Overrides the live drift score.')),
  is_drift_active: Type.Optional(Type.Boolean()),
  summary: Type.Optional(Text(2000)),
  current_sub_goal: Type.Optional(Text(2000)),
})
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

const Status = Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('completed')])
const Items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Optional(Type.Array(item, { maxItems: 500 }))
const PlanTask = Type.Object({ description: Text(2000), status: Status }, { additionalProperties: false })
const TodoItem = Type.Object({ content: Text(2000), status: Status }, { additionalProperties: false })
export const RecitationContextBody = Body({
  plan_tasks: Items(PlanTask),
  todos: Items(TodoItem),
  memories: Items(Text(2000)),
  active_files: Items(Text(1000)),
  recent_errors: Items(Text(2000)),
})
export const RecitationContext = Type.Object(
  {
    plan_tasks: Type.Optional(Type.Array(Type.Object({ description: Type.String(), status: Status }))),
    todos: Type.Optional(Type.Array(Type.Object({ content: Type.String(), status: Status }))),
    memories: Type.Optional(Type.Array(Type.String())),
    active_files: Type.Optional(Type.Array(Type.String())),
    recent_errors: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'RecitationContext' },
)

export const RecitationQuery = Type.Object({
  iteration: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
  context_tokens: Type.Optional(Count(100_000_000)),
})
export const RecitationPreview = Type.Object(
  {
    should_inject: Type.Boolean(),
    frequency: Type.Integer(),
    content: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    token_estimate: Type.Integer(),
  },
  { title: 'RecitationPreview' },
)
/** A chat message: `role` and `content`, any other fields kept as sent. */
const ChatMessage = Type.Object({ role: Text(100), content: Type.Unknown() }, { additionalProperties: true })
export const InjectRecitationBody = Body({
  iteration: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
  messages: Type.Array(ChatMessage, { maxItems: 10_000 }),
  context_tokens: Type.Optional(Count(100_000_000)),
  force: Type.Optional(Type.Boolean()),
})
export const RecitationInjection = Type.Object(
  {
    messages: Type.Array(ChatMessage),
    injected: Type.Boolean(),
    recitation: Type.Union([Type.Object({ text: Type.String(), token_estimate: Type.Integer() }), Type.Null()]),
  },
  { title: 'RecitationInjection' },
)
