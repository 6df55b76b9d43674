/**
 * Receiver process for bench/scheduler.bench.ts (forked with IPC): verifies every delivery with
 * the `standardwebhooks` package and records its lateness (arrival − data.scheduled_for).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

const hooks = new Map<string, Webhook>()
const lateness: number[] = []
let valid = 0
let invalid = 0
let lastAt = 0

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8')
    const wh = hooks.get(req.url ?? '')
    try {
      const msg = wh!.verify(body, req.headers as Record<string, string>) as { data: { scheduled_for: string } }
      valid++
      lastAt = Date.now()
      lateness.push(lastAt - Date.parse(msg.data.scheduled_for))
    } catch {
      invalid++
    }
    res.statusCode = 204
    res.end()
  })
})

process.on('message', (m: { secrets?: Record<string, string>; report?: boolean; reset?: boolean }) => {
  if (m.secrets) for (const [path, s] of Object.entries(m.secrets)) hooks.set(path, new Webhook(s))
  if (m.reset) {
    lateness.length = 0
    valid = invalid = lastAt = 0
  }
  if (m.report) process.send!({ valid, invalid, lastAt, lateness })
})

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
