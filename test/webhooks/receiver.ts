import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/** How the receiver answers request number `n` (0-based); default 204. */
export type Responder = (n: number, res: ServerResponse, req: Received) => void | Promise<void>

/** A real HTTP receiver on 127.0.0.1:0 that records every request it gets. */
export class Receiver {
  readonly received: Received[] = []
  responder: Responder = (_n, res) => {
    res.statusCode = 204
    res.end()
  }
  private server: Server | undefined
  port = 0

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const rec = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
        const n = this.received.length
        this.received.push(rec)
        void this.responder(n, res, rec)
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.port = (this.server!.address() as AddressInfo).port
    return this
  }

  async stop(): Promise<void> {
    if (!this.server) return
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }
}
