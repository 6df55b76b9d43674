import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { Type, type Static, type TObject, type TSchema } from 'typebox'
import { CreateReminder, ListRemindersQuery, Reminder, ReminderList, ReminderParams, SearchQuery, SearchResults, SnoozeBody, SnoozedReminder, TurnBody, TurnResult } from '../reminders/schemas.js'
import { RecitationPreview, RecitationQuery } from '../sessions/recitation-schemas.js'
import { CreateSessionBody, GoalReminder, ReminderQuery, Session, SessionParams, StepBody, StepResult } from '../sessions/schemas.js'
import { reminderLine, reminderListText, searchText, snoozeText, verdictSentence } from './texts.js'

/**
 * The MCP tools. Each is one REST operation of /v1 (see call.ts): its input schema is the route's
 * body or query schema plus the path's id, and its output schema the route's success body, both
 * the very TypeBox schemas the routes validate with, so a field added to a route reaches its tool.
 */
export interface McpTool {
  /** What tools/list shows. */
  definition: Tool
  method: 'GET' | 'POST'
  /** The REST path; `{name}` stands for the argument of that name (the route's `:id`). */
  path: string
  /** The argument in the path, if any: the route reports it as `params/id`. */
  idArg?: string
  /** POST with a body: the arguments other than the id are the JSON body (GET: the query string). */
  hasBody: boolean
  /** The short text for the model, from the REST body and the arguments. */
  text(result: unknown, args: Record<string, unknown>): string
}

interface ToolSpec<O extends TSchema> {
  name: string
  description: string
  method: 'GET' | 'POST'
  path: string
  id?: { name: string; schema: TSchema }
  /** The route's body (POST) or query string (GET) schema. */
  fields?: TObject
  output: O
  text(result: Static<O>, args: Record<string, unknown>): string
}

function tool<O extends TSchema>(spec: ToolSpec<O>): McpTool {
  const { name, description, method, path, id, fields, output } = spec
  const inputSchema = Type.Object({ ...(id ? { [id.name]: id.schema } : {}), ...fields?.properties }, { additionalProperties: false })
  return {
    definition: {
      name,
      description,
      inputSchema: inputSchema as unknown as Tool['inputSchema'],
      outputSchema: output as unknown as Tool['outputSchema'],
      annotations: { readOnlyHint: method === 'GET', openWorldHint: false },
    },
    method,
    path,
    ...(id ? { idArg: id.name } : {}),
    hasBody: method === 'POST' && fields !== undefined,
    text: (result, args) => spec.text(result as Static<O>, args),
  }
}

const session = { name: 'session_id', schema: SessionParams.properties.id }
const reminder = { name: 'reminder_id', schema: ReminderParams.properties.id }

export const TOOLS: readonly McpTool[] = [
  tool({
    name: 'start_goal_session',
    description: 'Open a goal session for a task: its goal, optional plan steps and config. Returns the session; keep its id.',
    method: 'POST',
    path: '/v1/sessions',
    fields: CreateSessionBody,
    output: Session,
    text: (s) => `Goal session ${s.id} started with ${s.plan.length} plan step${s.plan.length === 1 ? '' : 's'}; ` + `call record_step with session_id "${s.id}" after every step.`,
  }),
  tool({
    name: 'record_step',
    description: 'Report a step you just took (what you did, optionally its output) and get the verdict: alignment, drift, loop/stall flags and the recommended action.',
    method: 'POST',
    path: '/v1/sessions/{session_id}/steps',
    id: session,
    fields: StepBody,
    output: StepResult,
    text: verdictSentence,
  }),
  tool({
    name: 'get_goal_reminder',
    description: "A goal reminder for turn N (full, compact or ultra-compact as the turns go by) to keep in view; progress and drift are the session's own.",
    method: 'GET',
    path: '/v1/sessions/{session_id}/reminder',
    id: session,
    fields: ReminderQuery,
    output: GoalReminder,
    text: (r) => r.text,
  }),
  tool({
    name: 'get_recitation',
    description: 'The recitation block (goal, plan, todos, memories) for iteration N and whether it is due. Read-only.',
    method: 'GET',
    path: '/v1/sessions/{session_id}/recitation',
    id: session,
    fields: RecitationQuery,
    output: RecitationPreview,
    text: (r, args) =>
      r.text === null
        ? `Nothing to recite at iteration ${String(args.iteration)}.`
        : r.should_inject
          ? r.text
          : `Not due at iteration ${String(args.iteration)} (every ${r.frequency} iterations); the block would be:\n${r.text}`,
  }),
  tool({
    name: 'turn_start',
    description: 'Call before each LLM call with the user message (and session_id): returns what to inject now, due and matching reminders plus goal reminder and recitation, within the token budget.',
    method: 'POST',
    path: '/v1/turns',
    fields: TurnBody,
    output: TurnResult,
    text: (r) => r.injection.text || 'Nothing to inject this turn.',
  }),
  tool({
    name: 'create_reminder',
    description: 'Create a reminder: scheduled (at), recurring (cron, timezone) or context-triggered (pattern in a user message).',
    method: 'POST',
    path: '/v1/reminders',
    fields: CreateReminder,
    output: Reminder,
    text: (r) => `Created reminder ${reminderLine(r)}.`,
  }),
  tool({
    name: 'list_reminders',
    description: 'List reminders, oldest first, filtered by status, priority, trigger type or tag.',
    method: 'GET',
    path: '/v1/reminders',
    fields: ListRemindersQuery,
    output: ReminderList,
    text: (r) => reminderListText(r.items, r.next_cursor, 'No reminders.'),
  }),
  tool({
    name: 'search_reminders',
    description: 'Full-text search over reminders (title, body, tags, pattern), best match first.',
    method: 'GET',
    path: '/v1/reminders/search',
    fields: SearchQuery,
    output: SearchResults,
    text: (r, args) => searchText(r, args.q),
  }),
  tool({
    name: 'complete_reminder',
    description: 'Mark a reminder done.',
    method: 'POST',
    path: '/v1/reminders/{reminder_id}/complete',
    id: reminder,
    output: Reminder,
    text: (r) => `Reminder ${r.id} is now ${r.status}.`,
  }),
  tool({
    name: 'snooze_reminder',
    description: 'Snooze a reminder for `minutes` or until `until` (exactly one), clamped to its priority bounds.',
    method: 'POST',
    path: '/v1/reminders/{reminder_id}/snooze',
    id: reminder,
    fields: SnoozeBody,
    output: SnoozedReminder,
    text: snoozeText,
  }),
  tool({
    name: 'dismiss_reminder',
    description: 'Dismiss a reminder without doing it.',
    method: 'POST',
    path: '/v1/reminders/{reminder_id}/dismiss',
    id: reminder,
    output: Reminder,
    text: (r) => `Reminder ${r.id} is now ${r.status}.`,
  }),
]
