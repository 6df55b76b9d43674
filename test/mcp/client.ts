import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach } from 'vitest'
import type { TestApp } from '../helpers.js'

const clients: Client[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close()
})

/** The app listening on a free port of 127.0.0.1 (closed with the app); returns its /mcp URL. */
export async function listen(t: TestApp): Promise<URL> {
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
  return new URL('/mcp', address)
}

/** The SDK's own client over Streamable HTTP, sending `headers` (the API key) on every request. */
export async function connect(url: URL, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'goalkeeper-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }))
  clients.push(client)
  return client
}

/** A tool call's result with its text, typed for the assertions. */
export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const first = result.content[0]
  const text = first?.type === 'text' ? first.text : ''
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { ...result, text, data: result.structuredContent as any }
}
