/**
 * A call to a tool the session does not have, named at once (langchain #37961: a hallucinated
 * tool called again and again in one turn). The tools are `config.tools`, or the list the agent
 * reported (`PUT /v1/sessions/{id}/tools`), the later one winning; a name ending in `*` stands for
 * every tool it begins (`mcp__github__*`). Without either list nothing is checked.
 */
import { distance } from 'fastest-levenshtein'

export const TOOLS_MAX = 1000
export const TOOL_NAME_MAX = 200

export interface UnknownTool {
  /** The tool called. */
  name: string
  /** The session's tools nearest to it (a typo, another casing), at most three. */
  similar: string[]
  /** Calls in a row (message steps between not counted) to tools the session does not have, this one included. */
  count: number
}

/**
 * A near name: one begins with the other (`read` and `readfile`, at least 4 characters), or a few
 * edits apart (one per four characters of the shorter name, at most 3).
 */
function nearEnough(a: string, b: string, d: number): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return (short.length >= 4 && long.startsWith(short)) || d <= Math.min(3, Math.floor(short.length / 4))
}

/** Lowercased, without separators: `Read_File`, `read-file` and `readFile` compare alike. */
const squash = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '')

export class ToolList {
  readonly names: readonly string[]
  private readonly exact: ReadonlySet<string>
  private readonly prefixes: readonly string[]

  constructor(names: readonly string[]) {
    this.names = names
    this.exact = new Set(names.filter((n) => !n.endsWith('*')))
    this.prefixes = names.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1))
  }

  has(name: string): boolean {
    return this.exact.has(name) || this.prefixes.some((p) => name.startsWith(p))
  }

  /** The listed names nearest to `name`, nearest first. */
  similar(name: string): string[] {
    const s = squash(name)
    return [...this.exact]
      .map((n) => ({ n, d: distance(squash(n), s) }))
      .filter((x) => x.d === 0 || nearEnough(squash(x.n), s, x.d))
      .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
      .slice(0, 3)
      .map((x) => x.n)
  }
}

/** One sentence the model can act on. */
export function unknownToolAdvice(u: UnknownTool): string {
  const hint = u.similar.length > 0 ? ` The nearest of your tools: ${u.similar.map((n) => `"${n}"`).join(', ')}.` : ' Use one of the tools you were given.'
  const again = u.count > 1 ? ` That is ${u.count} calls in a row to tools that do not exist.` : ''
  return `"${u.name}" is not one of your tools: the call cannot work.${hint}${again}`
}
