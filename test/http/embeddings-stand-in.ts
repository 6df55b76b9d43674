import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Dimension of the stand-in's vectors. */
const DIM = 256

/** A deterministic embedding: each lowercased word adds 1 at its FNV-1a hash mod DIM (hashed bag of words). */
export function standInVector(text: string, dim = DIM): number[] {
  const v = new Array<number>(dim).fill(0)
  for (const word of text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)) {
    let h = 0x811c9dc5
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193)
    v[(h >>> 0) % dim]! += 1
  }
  return v
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0
  let na = 0
  let nb = 0
  a.forEach((x, i) => {
    dot += x * b[i]!
    na += x * x
    nb += b[i]! * b[i]!
  })
  return dot / Math.sqrt(na * nb)
}

export interface SeenRequest {
  path: string
  authorization: string | undefined
  body: { model: string; input: string | string[] }
}

/**
 * A stand-in OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1; the first path segment
 * picks the behaviour: `ok`, `slow` (answers after 1 s), `broken` (500), `garbage` (not JSON),
 * `empty` (no `data`), `short` (half-length vectors for texts mentioning reddit), `limited` (400 for
 * an input over 5,000 characters, as a provider does past its model's token limit), `switch` (whichever
 * of those `setSwitch` last chose, `ok` at first: a provider that goes down and comes back).
 */
export async function startStandIn(): Promise<{ base: string; seen: SeenRequest[]; setSwitch(mode: string): void; close(): Promise<void> }> {
  const seen: SeenRequest[] = []
  let switched = 'ok'
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      const body = JSON.parse(raw) as SeenRequest['body']
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body })
      const inputs = Array.isArray(body.input) ? body.input : [body.input]
      const segment = (req.url ?? '').split('/')[1]
      const mode = segment === 'switch' ? switched : segment
      const answer = (dim: (t: string) => number) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', model: body.model, data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: standInVector(t, dim(t)) })) }))
      if (mode === 'ok') return answer(() => DIM)
      if (mode === 'limited') {
        if (inputs.some((t) => t.length > 5000)) return res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"input too long"}}')
        return answer(() => DIM)
      }
      if (mode === 'short') return answer((t) => (t.includes('reddit') ? DIM / 2 : DIM))
      if (mode === 'slow') return void setTimeout(() => answer(() => DIM), 1000).unref()
      if (mode === 'broken') return res.writeHead(500).end('boom')
      if (mode === 'garbage') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": [')
      if (mode === 'empty') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object": "list"}')
      res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    setSwitch: (mode: string) => void (switched = mode),
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
