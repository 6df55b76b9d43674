import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import type { ProblemBody } from '../schemas.js'
import type { McpTool } from './tools.js'

const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] })

/**
 * Runs a tool as the REST operation it is, through `app.inject` with `headers` (the caller's key):
 * validation, agent isolation, unit of work and errors are the route's own. A 2xx body becomes
 * `structuredContent` with the tool's short text; a problem becomes an `isError` result whose
 * text is the problem's detail, its REST field paths (`body/goal`, `params/id`) renamed to the
 * tool's arguments.
 */
export async function callTool(app: FastifyInstance, tool: McpTool, args: Record<string, unknown>, headers: Record<string, string>): Promise<CallToolResult> {
  const known = Object.keys(tool.definition.inputSchema.properties ?? {})
  const unknown = Object.keys(args).filter((k) => !known.includes(k))
  if (unknown.length > 0) return failure(`Unknown argument ${unknown.join(', ')}; ${tool.definition.name} takes ${known.join(', ')}.`)

  const fields = { ...args }
  let url = tool.path
  if (tool.idArg !== undefined) {
    const id = fields[tool.idArg]
    if (id === undefined) return failure(`${tool.idArg} is required.`)
    delete fields[tool.idArg]
    url = url.replace(`{${tool.idArg}}`, encodeURIComponent(String(id)))
  }
  if (tool.method === 'GET') {
    // A query string has no null: an argument given as null is left out, as if not given.
    const query = new URLSearchParams()
    for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) query.set(k, typeof v === 'string' ? v : JSON.stringify(v))
    if (query.size > 0) url += `?${query}`
  }
  const payload = tool.hasBody ? fields : undefined

  const res = await app.inject({ method: tool.method, url, headers, ...(payload ? { payload } : {}) })
  const body: unknown = res.body === '' ? null : JSON.parse(res.body)
  if (res.statusCode >= 200 && res.statusCode < 300) {
    return { content: [{ type: 'text', text: tool.text(body, args) }], structuredContent: body as Record<string, unknown> }
  }
  return failure(problemText(body as Partial<ProblemBody> | null, tool.idArg) ?? `The call failed with HTTP status ${res.statusCode}.`)
}

/** `body/trigger/at` → `trigger/at`, `querystring/turn` → `turn`, `params/id` → the id argument. */
function argumentPath(path: string, idArg: string | undefined): string {
  if (path === 'params/id' && idArg) return idArg
  return path.replace(/^(body|querystring|params)\//, '')
}

function problemText(problem: Partial<ProblemBody> | null, idArg: string | undefined): string | undefined {
  if (typeof problem?.detail !== 'string') return undefined
  let text = problem.detail
  // Longest first, so `body/trigger/at` is renamed whole before `body/trigger` could match inside it.
  const paths = [...new Set((problem.errors ?? []).map((e) => e.path))].sort((a, b) => b.length - a.length)
  for (const path of paths) text = text.replaceAll(path, argumentPath(path, idArg))
  return text
}
