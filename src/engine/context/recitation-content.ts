/**
 * The recitation block's text: each part in its own format, cut to a token
 * budget measured with the real tokenizer.
 */
import { countTokens } from '../similarity/text.js'
import { clipToTokens, countTokensByLines, oneLine } from './token-fit.js'

export type RecitationSource = 'goal' | 'plan' | 'todo' | 'memory' | 'custom'
export type TaskStatus = 'pending' | 'in_progress' | 'completed'

export interface PlanTask {
  description: string
  status: TaskStatus
}

export interface TodoItem {
  content: string
  status: TaskStatus
}

/** Field names follow `PUT /v1/sessions/{id}/context`. */
export interface RecitationState {
  iteration: number
  goal?: string
  plan_tasks?: PlanTask[]
  /** Index of the current plan task; when absent, the first `in_progress` task. */
  current_task_index?: number
  todos?: TodoItem[]
  memories?: string[]
  active_files?: string[]
  recent_errors?: string[]
  /** Context size in tokens, for `frequency: 'adaptive'`. */
  context_tokens?: number
}

export const RECITATION_TRUNCATION_MARKER = '\n...[truncated]'
const PART_SEPARATOR = '\n\n'

export interface BuiltContent {
  content: string
  tokens: number
  sources: RecitationSource[]
}

type CustomBuilder = ((state: RecitationState) => string | null | undefined) | undefined

const joinItems = (items: readonly string[], sep: string): string => items.map(oneLine).join(sep)

function planPart(tasks: readonly PlanTask[], index: number | undefined): string {
  const done = tasks.filter((t) => t.status === 'completed').length
  const lines = [`**Plan Progress**: ${done}/${tasks.length} tasks completed`]
  const current = index === undefined ? tasks.find((t) => t.status === 'in_progress') : tasks[index]
  if (current) lines.push(`**Current Task**: ${oneLine(current.description)}`)
  const next = tasks.filter((t) => t.status === 'pending').slice(0, 2)
  if (next.length > 0)
    lines.push(
      `**Next**: ${joinItems(
        next.map((t) => t.description),
        '; ',
      )}`,
    )
  return lines.join('\n')
}

function todoPart(todos: readonly TodoItem[]): string {
  const active: string[] = []
  const pending: string[] = []
  let done = 0
  for (const t of todos) {
    if (t.status === 'completed') done++
    else if (t.status === 'in_progress') active.push(t.content)
    else if (t.status === 'pending') pending.push(t.content)
  }
  const lines = [`**Todo Status**: ${done} done, ${active.length} active, ${pending.length} pending`]
  if (active.length > 0) lines.push(`**In Progress**: ${joinItems(active, '; ')}`)
  if (pending.length > 3) {
    lines.push(`**Next**: ${joinItems(pending.slice(0, 3), '; ')} (+${pending.length - 3} more)`)
  } else if (pending.length > 0) {
    lines.push(`**Remaining**: ${joinItems(pending, '; ')}`)
  }
  return lines.join('\n')
}

function memoryPart(memories: readonly string[]): string {
  const more = memories.length > 3 ? ` (+${memories.length - 3} more)` : ''
  return `**Relevant Context**: ${joinItems(memories.slice(0, 3), '; ')}${more}`
}

/** Parts in a fixed order; active files and errors whatever the sources. */
function collectParts(state: RecitationState, sources: readonly RecitationSource[], custom: CustomBuilder) {
  const parts: string[] = []
  const from: RecitationSource[] = []
  const add = (source: RecitationSource, text: string): void => {
    parts.push(text)
    if (!from.includes(source)) from.push(source)
  }
  const goal = state.goal ? oneLine(state.goal) : ''
  if (sources.includes('goal') && goal !== '') add('goal', `**Goal**: ${goal}`)
  if (sources.includes('plan') && state.plan_tasks) add('plan', planPart(state.plan_tasks, state.current_task_index))
  if (sources.includes('todo') && state.todos && state.todos.length > 0) add('todo', todoPart(state.todos))
  if (sources.includes('memory') && state.memories && state.memories.length > 0) {
    add('memory', memoryPart(state.memories))
  }
  if (sources.includes('custom') && custom) {
    const out = custom(state)
    if (out) add('custom', out)
  }
  if (state.active_files && state.active_files.length > 0) {
    parts.push(`**Active files**: ${joinItems(state.active_files, ', ')}`)
  }
  if (state.recent_errors && state.recent_errors.length > 0) {
    parts.push(`**Recent errors**: ${joinItems(state.recent_errors.slice(-2), '; ')}`)
  }
  return { parts, from }
}

export function buildRecitationContent(state: RecitationState, config: { sources: readonly RecitationSource[]; max_tokens: number }, custom: CustomBuilder): BuiltContent | null {
  const { parts, from } = collectParts(state, config.sources, custom)
  if (parts.length === 0) return null
  const content = parts.join(PART_SEPARATOR)
  const tokens = countTokensByLines(content)
  if (tokens <= config.max_tokens) return { content, tokens, sources: from }
  const cut = clipToTokens(content, config.max_tokens, RECITATION_TRUNCATION_MARKER)
  return cut === '' ? null : { content: cut, tokens: countTokens(cut), sources: from }
}
