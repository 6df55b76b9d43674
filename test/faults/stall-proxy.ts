import { connect, createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a server, that can stall: while stalled it forwards nothing
 * either way and connects nothing new, without closing anything, as a network that stops
 * delivering packets would. `resume()` delivers what was held up.
 */
export class StallProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private stalled = false
  /** What arrived while stalled, in order: forwarded on `resume()`. */
  private held: Array<() => void> = []
  private readonly target: { host: string; port: number }
  port = 0

  constructor(target: { host: string; port: number }) {
    this.target = target
  }

  async start(): Promise<this> {
    this.server = createServer((client) => {
      this.track(client)
      const upstream = connect(this.target.port, this.target.host)
      this.track(upstream)
      this.forward(client, upstream)
      this.forward(upstream, client)
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.port = (this.server!.address() as AddressInfo).port
    return this
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(this.port)
    return u.toString()
  }

  stall(): void {
    this.stalled = true
  }

  resume(): void {
    this.stalled = false
    for (const deliver of this.held.splice(0)) deliver()
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  /** Bytes and the end of `from` go to `to`, or wait while stalled (a new connection's first bytes too). */
  private forward(from: Socket, to: Socket): void {
    const gate = (deliver: () => void) => (this.stalled ? this.held.push(deliver) : deliver())
    from.on('data', (chunk: Buffer) => gate(() => to.write(chunk)))
    from.on('end', () => gate(() => to.end()))
    from.on('close', () => gate(() => to.destroy()))
  }

  private track(socket: Socket): void {
    this.sockets.add(socket)
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.sockets.delete(socket))
  }
}
