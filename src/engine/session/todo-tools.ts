/**
 * The agent's own todo list, read from the tool calls that write it, so a coding agent's plan and
 * progress are the list it keeps anyway. Whole lists: Claude Code's `TodoWrite`
 * (`{ todos: [{ content, status }] }`), Codex CLI's `update_plan` (`{ plan: [{ step, status }] }`),
 * Gemini CLI's `write_todos` (`{ todos: [{ description, status }] }`). One item at a time: Claude
 * Code's task tools, `TaskCreate` (`{ subject, taskId }`: the id its answer gave, which the hook
 * adds to the arguments) and `TaskUpdate` (`{ taskId, status?, subject? }`, status `deleted` removes).
 */
import type { StepTool } from '../detection/loop-kinds.js'
import type { TaskStatus, TodoItem } from '../context/recitation-content.js'
import { truncateChars } from '../similarity/text.js'

/** Items kept of one list, and characters of one item: a plan, not a document. */
const TODO_ITEMS_MAX = 100
const TODO_TEXT_MAX = 500

const WHOLE_LISTS: Readonly<Record<string, { list: string; text: readonly string[] }>> = {
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
  deleted: null,
}

const RANK: Readonly<Record<TaskStatus, number>> = { completed: 0, in_progress: 1, pending: 2 }

type Item = { id: string; content: string; status: TaskStatus }

export interface TodoListJSON {
  items: [id: string, content: string, status: TaskStatus][]
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? truncateChars(v.trim(), TODO_TEXT_MAX) : undefined)

export class TodoList {
  private items: Item[] = []

  /**
   * Applies the call to the list. Returns the list after it, completed items first, then those in
   * progress, then the pending ones (so the plan's position, items done, points at the work in
   * hand), or null when the call does not write a todo list (or cannot be read as one).
   */
  apply(tool: StepTool): TodoItem[] | null {
    const changed = WHOLE_LISTS[tool.name] !== undefined ? this.replace(tool) : tool.name === 'TaskCreate' || tool.name === 'TaskUpdate' ? this.task(tool) : false
    if (!changed) return null
    return this.items.map(({ content, status }) => ({ content, status })).sort((a, b) => RANK[a.status] - RANK[b.status])
  }

  private replace(tool: StepTool): boolean {
    const shape = WHOLE_LISTS[tool.name]!
    const raw = tool.args[shape.list]
    if (!Array.isArray(raw)) return false
    const items: Item[] = []
    for (const entry of raw.slice(0, TODO_ITEMS_MAX)) {
      if (entry === null || typeof entry !== 'object') continue
      const e = entry as Record<string, unknown>
      const content = shape.text.map((k) => text(e[k])).find((v) => v !== undefined)
      const status = typeof e.status === 'string' ? STATUS[e.status] : 'pending'
      if (content !== undefined && status !== null && status !== undefined) items.push({ id: String(items.length + 1), content, status })
    }
    this.items = items
    return true
  }

  private task(tool: StepTool): boolean {
    const id = typeof tool.args.taskId === 'string' || typeof tool.args.taskId === 'number' ? String(tool.args.taskId) : undefined
    if (id === undefined) return false
    const status = typeof tool.args.status === 'string' ? STATUS[tool.args.status] : undefined
    const subject = text(tool.args.subject)
    const at = this.items.findIndex((i) => i.id === id)
    if (tool.name === 'TaskCreate') {
      if (subject === undefined || at >= 0 || this.items.length >= TODO_ITEMS_MAX) return false
      this.items.push({ id, content: subject, status: status ?? 'pending' })
      return true
    }
    if (at < 0) return false
    if (status === null) this.items.splice(at, 1)
    else this.items[at] = { id, content: subject ?? this.items[at]!.content, status: status ?? this.items[at]!.status }
    return true
  }

  toJSON(): TodoListJSON {
    return { items: this.items.map((i) => [i.id, i.content, i.status]) }
  }

  static fromJSON(json: TodoListJSON | undefined): TodoList {
    const l = new TodoList()
    l.items = (json?.items ?? []).map(([id, content, status]) => ({ id, content, status }))
    return l
  }
}
