import fc from 'fast-check'
import { expect, it } from 'vitest'
import { TOOLS } from '../../src/mcp/tools.js'
import { buildTestApp } from '../helpers.js'
import { fuzzParameters } from '../http/fuzz-arbitraries.js'

const names = TOOLS.map((t) => t.definition.name)
const argNames = [...new Set(TOOLS.flatMap((t) => Object.keys(t.definition.inputSchema.properties ?? {})))]

it('random tool arguments always get a tool result (success or isError), never a transport error or a 5xx', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const headers = { ...a.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  let errors = 0
  let id = 0
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...names), fc.dictionary(fc.constantFrom(...argNames), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), async (name, args) => {
      const payload = { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }
      const res = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload })
      expect(res.statusCode, `${name} ${JSON.stringify(args)} → ${res.body}`).toBe(200)
      const body = res.json() as { result?: { isError?: boolean; content: { text: string }[] } }
      expect(body.result, res.body).toBeDefined()
      if (body.result!.isError) {
        errors++
        expect(body.result!.content[0]!.text).not.toMatch(/unexpected error|^$/i)
      }
    }),
    // Found on PostgreSQL: a __proto__ key in the arguments was a transport-level 400.
    fuzzParameters(200, [['start_goal_session', JSON.parse('{"goal":{"__proto__":{"x":1}}}') as Record<string, fc.JsonValue>]]),
  )
  expect(errors).toBeGreaterThan(50)
  // Several seconds alone; past the default 20 s beside the rest of the suite on two busy cores.
}, 60_000)
