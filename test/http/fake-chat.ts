import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request to the stand-in: its path (which picks the behaviour in a test) and its JSON body. */
export interface ChatRequest<B> {
  path: string
  body: B
  /** Answers with a chat completion whose message is `content`. */
  answer: (content: string) => void
  res: ServerResponse
}

/** A stand-in OpenAI-compatible chat completions endpoint on loopback; `route` answers each request. */
export async function fakeChat<B>(route: (r: ChatRequest<B>) => void): Promise<{ base: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      const answer = (content: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content } }] }))
      route({ path: req.url ?? '', body: JSON.parse(raw) as B, answer, res })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
