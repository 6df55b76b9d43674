import { Type } from 'typebox'
import { Body } from '../schemas.js'
import { EXAMPLE_PLAN } from './examples.js'
import { GoalReminder } from './schemas.js'
import { UnchangedSkip } from './detection-schemas.js'

/** TypeBox schemas of the recitation: the context a session recites from, the preview and the injection. */

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max })
const Count = (max: number) => Type.Integer({ minimum: 0, maximum: max })

const Status = Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('completed')])
const Items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Optional(Type.Array(item, { maxItems: 500 }))
const PlanTask = Type.Object({ description: Text(2000), status: Status }, { additionalProperties: false })
const TodoItem = Type.Object({ content: Text(2000), status: Status }, { additionalProperties: false })
export const RecitationContextBody = Body(
  {
    plan_tasks: Items(PlanTask),
    todos: Items(TodoItem),
    memories: Items(Text(2000)),
    active_files: Items(Text(1000)),
    recent_errors: Items(Text(2000)),
  },
  {
    examples: [
      {
        plan_tasks: [
          { description: EXAMPLE_PLAN[0]!, status: 'completed' },
          { description: EXAMPLE_PLAN[1]!, status: 'in_progress' },
          { description: EXAMPLE_PLAN[2]!, status: 'pending' },
        ],
        todos: [{ content: 'Return a Retry-After header with every 429', status: 'pending' }],
        memories: ['Peak load is 340 requests per minute from one key; most keys stay under 60'],
        active_files: ['src/middleware/rate-limit.ts'],
      },
    ],
  },
)
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
  iteration: Type.Integer({ minimum: 1, maximum: 1_000_000_000, examples: [5] }),
  context_tokens: Type.Optional(Count(100_000_000)),
})
export const RecitationPreview = Type.Object(
  {
    should_inject: Type.Boolean(),
    frequency: Type.Integer(),
    content: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    token_estimate: Type.Integer(),
    skipped: Type.Optional(UnchangedSkip),
  },
  { title: 'RecitationPreview' },
)
/** A chat message: `role` and `content`, any other fields kept as sent. */
const ChatMessage = Type.Object({ role: Text(100), content: Type.Unknown() }, { additionalProperties: true })
export const InjectRecitationBody = Body(
  {
    iteration: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    messages: Type.Array(ChatMessage, { maxItems: 10_000 }),
    context_tokens: Type.Optional(Count(100_000_000)),
    force: Type.Optional(Type.Boolean()),
  },
  {
    examples: [
      {
        iteration: 5,
        messages: [
          { role: 'system', content: 'You are a coding agent working in the search-api repository.' },
          { role: 'user', content: 'Continue with the rate limiter.' },
        ],
        context_tokens: 4200,
      },
    ],
  },
)
export const RecitationInjection = Type.Object(
  {
    messages: Type.Array(ChatMessage),
    injected: Type.Boolean(),
    recitation: Type.Union([Type.Object({ text: Type.String(), token_estimate: Type.Integer() }), Type.Null()]),
    skipped: Type.Optional(UnchangedSkip),
  },
  { title: 'RecitationInjection' },
)

/** `GET /v1/sessions/{id}/next-turn`: what the next turn would inject, recorded nowhere. */
export const NextTurn = Type.Object(
  {
    iteration: Type.Integer({ description: "The next step's number: the iteration `POST /v1/turns` uses when given none." }),
    reminder: GoalReminder,
    recitation: RecitationPreview,
  },
  { title: 'NextTurn' },
)
