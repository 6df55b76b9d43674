import type { IncomingHttpHeaders } from 'node:http'
import { listenLoopback, nth } from './loopback.js'

/** A hook event as Claude Code POSTed it. */
export interface HookCall {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body; `hook_event_name` names the event. */
  body: { hook_event_name: string; session_id: string; [key: string]: unknown }
}

/** What to answer one call with: a JSON body (2xx), or a status and raw body, or a delay first. */
export type HookAnswer = object | undefined | { status: number; body?: string; delayMs?: number }

export interface HookServer {
  url: string
  calls: HookCall[]
  events(): string[]
  /** The body of call number `n` (0-based); throws when there is none. */
  body(n: number): HookCall['body']
  close(): Promise<void>
}

const isRaw = (a: HookAnswer): a is { status: number; body?: string; delayMs?: number } => a !== undefined && 'status' in a && typeof a.status === 'number'

/**
 * A stand-in hook endpoint on 127.0.0.1: records every call and answers with what `answer`
 * returns for it (an empty 200 when it returns undefined).
 */
export async function startHookServer(answer: (call: HookCall) => HookAnswer = () => undefined): Promise<HookServer> {
  const calls: HookCall[] = []
  const server = await listenLoopback((req, raw, res) => {
    const call: HookCall = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: JSON.parse(raw || '{}') as HookCall['body'] }
    calls.push(call)
    const a = answer(call)
    const send = () => {
      if (res.destroyed) return
      if (isRaw(a)) {
        res.writeHead(a.status, { 'content-type': 'application/json' })
        return res.end(a.body ?? '')
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(a === undefined ? '' : JSON.stringify(a))
    }
    if (isRaw(a) && a.delayMs) setTimeout(send, a.delayMs)
    else send()
  })
  return { ...server, calls, events: () => calls.map((c) => c.body.hook_event_name), body: (n) => nth(calls, n, 'hook calls').body }
}
