/**
 * A proxy on 127.0.0.1 in front of a live goalkeeper that misbehaves on cue: each request takes
 * the next scripted fault (then plain forwarding), so retries can be watched end to end.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Fault =
  | { kind: 'forward' }
  /** Forwards, but answers only after `ms` (the server has done the work by then). */
  | { kind: 'slow'; ms: number }
  | { kind: 'status'; status: number; headers?: Record<string, string> }

export interface FaultProxy {
  url: string
  /** Requests seen: method, path and Idempotency-Key. */
  seen: { method: string; path: string; key: string | undefined }[]
  close(): Promise<void>
}

const body = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const parts: Buffer[] = []
    req.on('data', (c: Buffer) => parts.push(c))
    req.on('end', () => resolve(Buffer.concat(parts)))
  })

export async function faultProxy(upstream: string, faults: Fault[]): Promise<FaultProxy> {
  const seen: FaultProxy['seen'] = []
  const server: Server = createServer(async (req, res) => {
    const key = req.headers['idempotency-key']
    seen.push({ method: req.method ?? '', path: req.url ?? '', key: Array.isArray(key) ? key[0] : key })
    const fault = faults.shift() ?? { kind: 'forward' }
    const raw = await body(req)
    if (fault.kind === 'status') {
      const problem = { type: 'urn:problem:fault', title: 'Injected fault', status: fault.status, detail: 'from the fault proxy', instance: req.url }
      res.writeHead(fault.status, { 'content-type': 'application/problem+json', ...fault.headers }).end(JSON.stringify(problem))
      return
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<string, string>
    const answer = await fetch(upstream + (req.url ?? ''), { method: req.method, headers, body: raw.length > 0 ? raw : undefined })
    const text = await answer.text()
    if (fault.kind === 'slow') await new Promise((r) => setTimeout(r, fault.ms))
    if (res.destroyed) return
    const retryAfter = answer.headers.get('retry-after')
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) }).end(text)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
