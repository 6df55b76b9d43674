import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js'
import type * as TransportModule from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError } from '../errors.js'
import { useDepthCheckedJson } from '../json-body.js'
import { lazy } from '../lazy.js'
import { problemResponses } from '../schemas.js'
import { callTool } from './call.js'
import { TOOLS } from './tools.js'

const MCP_SPEC_URL = 'https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http'

const INSTRUCTIONS =
  'goalkeeper keeps you on your goal. Open a session with start_goal_session, call record_step after every step ' +
  'and follow its recommended action, and call turn_start before each LLM call to get what to inject.'

const INITIALIZE_EXAMPLE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'example-client', version: '1.0.0' } },
}

const JsonRpcReply = Type.Object({ jsonrpc: Type.Literal('2.0') }, { additionalProperties: true, description: 'The JSON-RPC response.' })

const byName = new Map(TOOLS.map((t) => [t.definition.name, t]))
const listed = { tools: TOOLS.map((t) => t.definition) }

export interface McpRouteOptions {
  version: string
  /**
   * Headers that make a tool's REST call part of the caller's request: its request id, and the
   * pass that keeps the rate limit from counting it a second time (given by buildApp).
   */
  selfCallHeaders(request: FastifyRequest): Record<string, string>
}

/**
 * The SDK, loaded with the first MCP message rather than at start: it and its zod are ~13 MB of
 * RSS (~7 MB of heap) that a deployment whose agents call REST never uses.
 */
const loadSdk = lazy(async (): Promise<typeof ServerModule & typeof TypesModule & typeof TransportModule> => {
  const [server, types, transport] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ])
  return { ...server, ...types, ...transport }
})

/** A fresh MCP server per request (stateless mode): its tools act as the agent the caller's key names. */
async function mcpServer(request: FastifyRequest, opts: McpRouteOptions): Promise<{ server: ServerModule.Server; transport: TransportModule.WebStandardStreamableHTTPServerTransport }> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode, WebStandardStreamableHTTPServerTransport } = await loadSdk()
  const server = new Server({ name: 'goalkeeper', version: opts.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const headers = { ...opts.selfCallHeaders(request), authorization: request.headers.authorization ?? '' }
  server.setRequestHandler(ListToolsRequestSchema, () => listed)
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => {
    const tool = byName.get(params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${params.name}; tools/list names them.`)
    return callTool(request.server, tool, params.arguments ?? {}, headers)
  })
  return { server, transport: new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) }
}

/** The Fastify request as the Web Request the SDK's transport reads (its body is already parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v)
  }
  // The transport only reports the URL to handlers; a fixed origin keeps a bad Host header harmless.
  return new Request(new URL(request.url, 'http://localhost'), { method: request.method, headers })
}

async function relay(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status)
  response.headers.forEach((value, name) => void reply.header(name, value))
  // JSON response mode: the body is complete once the transport answers (no open SSE stream).
  const text = await response.text()
  return reply.send(text === '' ? undefined : text)
}

/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP (stateless, JSON responses), the
 * tools of tools.ts. Same key, rate limit and body limit as /v1: auth and rate limiting hook this
 * route like any other. Without sessions there is nothing to stream or end, so GET and DELETE
 * answer 405, as the transport spec allows.
 */
export const mcpRoutes: FastifyPluginAsync<McpRouteOptions> = async (app, opts) => {
  // Tool arguments are the caller's data: a `__proto__` or `constructor.prototype` key in them is
  // dropped here (this plugin's context only) and the tool's own validation answers with isError,
  // instead of a 400 at the transport that an MCP client cannot show as a tool result.
  useDepthCheckedJson(app, 'remove')
  app.post(
    '/mcp',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'sendMcpMessage',
        tags: ['mcp'],
        summary: 'Model Context Protocol endpoint (Streamable HTTP, stateless) serving the agent tools.',
        description:
          'One JSON-RPC message of the Model Context Protocol, sent by an MCP client rather than by hand (see externalDocs). ' +
          'Send `Accept: application/json, text/event-stream`; replies are JSON. The tools act as the agent of the API key.',
        externalDocs: { description: 'MCP Streamable HTTP transport', url: MCP_SPEC_URL },
        body: Type.Unknown({ description: 'A JSON-RPC request or notification.', examples: [INITIALIZE_EXAMPLE] }),
        response: {
          200: JsonRpcReply,
          202: Type.Null({ description: 'A notification or response was accepted.' }),
          ...problemResponses,
        },
      },
    },
    async (request, reply) => {
      const { server, transport } = await mcpServer(request, opts)
      try {
        await server.connect(transport)
        const response = await transport.handleRequest(webRequest(request), { parsedBody: request.body })
        return await relay(reply, response)
      } finally {
        await server.close()
      }
    },
  )

  const notAllowed = async () => {
    throw new AppError(405, 'method_not_allowed', 'This MCP endpoint is stateless: it opens no event stream and has no session to end. Use POST.', {
      headers: { allow: 'POST' },
    })
  }
  app.get('/mcp', { config: { auth: 'agent' }, schema: { hide: true } }, notAllowed)
  app.delete('/mcp', { config: { auth: 'agent' }, schema: { hide: true } }, notAllowed)
}
