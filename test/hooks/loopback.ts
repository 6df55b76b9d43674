import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Loopback {
  /** http://127.0.0.1:<port> */
  url: string
  /** Stops listening and drops open connections. */
  close(): Promise<void>
}

/** An HTTP server on 127.0.0.1:0 (the fakes and the hook endpoint) that hands `handle` each request with its whole body. */
export async function listenLoopback(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<Loopback> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Item `n` (0-based) of what a server recorded; throws, saying how many there are, when there is none. */
export function nth<T>(list: readonly T[], n: number, what: string): T {
  const item = list[n]
  if (item === undefined) throw new Error(`got ${list.length} ${what}, not ${n + 1}`)
  return item
}
