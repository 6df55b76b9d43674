/**
 * The agent's own todo list, read from the tool call that writes it, so a coding agent's plan and
 * progress are the list it keeps anyway: Claude Code's `TodoWrite` (`{ todos: [{ content, status }] }`),
 * Codex CLI's `update_plan` (`{ plan: [{ step, status }] }`) and Gemini CLI's `write_todos`
 * (`{ todos: [{ description, status }] }`). Each call carries the whole list.
 */
import type { StepTool } from './loops.js'
import type { TaskStatus, TodoItem } from './recitation-content.js'
import { truncateChars } from './text.js'

/** Items kept of one list, and characters of one item: a plan, not a document. */
export const TODO_ITEMS_MAX = 100
export const TODO_TEXT_MAX = 500

const LISTS: Readonly<Record<string, { list: string; text: readonly string[] }>> = {
  TodoWrite: { list: 'todos', text: ['content'] },
  update_plan: { list: 'plan', text: ['step'] },
  write_todos: { list: 'todos', text: ['description', 'content'] },
}

const STATUS: Readonly<Record<string, TaskStatus | null>> = {
  pending: 'pending',
  in_progress: 'in_progress',
  completed: 'completed',
  // A dropped item is no longer part of the plan.
  cancelled: null,
}

/**
 * The todo list this call writes, or null when the call is not a todo tool's (or its list is
 * unreadable). Completed items come first, then the one in progress, then the pending ones, so the
 * plan's position (items done) points at the item being worked on.
 */
export function todosOf(tool: StepTool): TodoItem[] | null {
  const shape = LISTS[tool.name]
  const raw = shape === undefined ? undefined : tool.args[shape.list]
  if (shape === undefined || !Array.isArray(raw)) return null
  const items: TodoItem[] = []
  for (const entry of raw.slice(0, TODO_ITEMS_MAX)) {
    if (entry === null || typeof entry !== 'object') continue
    const e = entry as Record<string, unknown>
    const text = shape.text.map((k) => e[k]).find((v): v is string => typeof v === 'string' && v.trim() !== '')
    const status = typeof e.status === 'string' ? STATUS[e.status] : 'pending'
    if (text === undefined || status === null || status === undefined) continue
    items.push({ content: truncateChars(text.trim(), TODO_TEXT_MAX), status })
  }
  const rank: Record<TaskStatus, number> = { completed: 0, in_progress: 1, pending: 2 }
  return items.sort((a, b) => rank[a.status] - rank[b.status])
}
