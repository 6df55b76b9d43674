import { randomUUID } from 'node:crypto'
import type { Replica } from '../replicas/replica.js'
import { call, sleep, type Answer } from './http.js'

/** An answer that was not a success, with when and where it came. */
export interface Refusal {
  at: number
  replica: number
  path: string
  answer: Answer
}

/**
 * Steady load on several replicas, as agents would send it: steps on a few sessions and reminder
 * creates, each request sent round-robin and repeated under the same `Idempotency-Key` until it
 * succeeds (what `@goalkeeper/client` does with a 503 or a 409 carrying `Retry-After`). It records
 * what was acknowledged with a 2xx, every other answer, and the slowest answer.
 */
export class Load {
  /** Acknowledged steps: session → step number → description. */
  readonly steps = new Map<string, Map<number, string>>()
  /** Acknowledged reminders: id → when it is due (epoch ms). */
  readonly reminders = new Map<string, number>()
  readonly refusals: Refusal[] = []
  slowestMs = 0
  answered = 0
  private running = false
  private workers: Promise<void>[] = []
  private turn = 0
  private readonly replicas: Replica[]
  private readonly key: string
  private readonly sessions: string[]

  constructor(replicas: Replica[], key: string, sessions: string[]) {
    this.replicas = replicas
    this.key = key
    this.sessions = sessions
    for (const s of sessions) this.steps.set(s, new Map())
  }

  get stepCount(): number {
    return [...this.steps.values()].reduce((n, m) => n + m.size, 0)
  }

  /** Refusals answered within [from, to]. */
  refusalsBetween(from: number, to: number): Refusal[] {
    return this.refusals.filter((r) => r.at >= from && r.at <= to)
  }

  start(): void {
    this.running = true
    const stepWorkers = this.sessions.map((session, w) =>
      this.loop(async (i) => {
        const description = `worker ${w} step ${i}: run the billing tests and read the report`
        const a = await this.send('POST', `/v1/sessions/${session}/steps`, { description, output: 'ok' })
        if (a) this.steps.get(session)!.set(a.body!.step_number as number, description)
      }),
    )
    const reminderWorkers = [0, 1].map((w) =>
      this.loop(async (i) => {
        // Due 2 to 6 s after creation: created before an outage, many come due during it.
        const due = Date.now() + 2000 + ((i * 7 + w * 3) % 5) * 1000
        const a = await this.send('POST', '/v1/reminders', { title: `Reminder ${w}-${i}`, trigger: { type: 'scheduled', at: new Date(due).toISOString() } })
        if (a) this.reminders.set(a.body!.id as string, due)
        await sleep(100)
      }),
    )
    this.workers = [...stepWorkers, ...reminderWorkers]
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.workers)
  }

  private async loop(work: (i: number) => Promise<void>): Promise<void> {
    for (let i = 0; this.running; i++) await work(i)
  }

  /** Sends until a 2xx (undefined if the load stops first), to the next replica each time. */
  private async send(method: string, path: string, body: unknown): Promise<Answer | undefined> {
    const headers = { 'idempotency-key': randomUUID() }
    while (this.running) {
      const replica = this.turn++ % this.replicas.length
      const r = this.replicas[replica]!
      const a = await call(r.url, method, path, this.key, body, headers).catch((err: unknown) => {
        throw new Error(`replica ${replica} did not answer (exit ${r.child.exitCode ?? r.child.signalCode}): ${String(err)}\n${r.stderr.join('').slice(-2000)}`)
      })
      this.answered++
      this.slowestMs = Math.max(this.slowestMs, a.ms)
      if (a.status >= 200 && a.status < 300) return a
      this.refusals.push({ at: Date.now(), replica, path, answer: a })
      await sleep(200)
    }
    return undefined
  }
}
