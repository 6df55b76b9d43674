/**
 * Applies stored OTLP records to their conversations' sessions, one conversation at a time, after
 * the export that stored them was answered (an export request never waits for verdicts). Woken by
 * each ingest; `start()` (server.ts) also sweeps now and then for records another process stored
 * and never applied (it stopped first), and prunes settled records past the duplicate window.
 *
 * Per conversation, in the order stored: the session opens on the first goal or prompt (a
 * `goalkeeper.goal` over a prompt); a later prompt joins its goal; usage waits for the next step
 * and is counted on it; a step is recorded. Each write settles its records in its own
 * transaction, so a record another process applied first rolls the write back (Claimed). The
 * verdicts go where a session's always go: webhooks, the dashboard, the session's steps.
 */
import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { SqlDatabase } from '../db/database.js'
import { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { Metrics } from '../metrics.js'
import type { SettingsService } from '../reminders/settings.js'
import type { Session, StepInput } from '../sessions/model.js'
import type { SessionsService } from '../sessions/service.js'
import { STEP_COST_MAX, STEP_TOKENS_MAX } from '../sessions/detection-schemas.js'
import { openToolSession } from '../tool-calls/tool-session.js'
import type { ObservedRecord } from './observed.js'
import { APPLIED, Claimed, DROPPED, type OtlpRepository, type WaitingRecord } from './repository.js'

export interface ApplierOptions {
  /** Records read per conversation per round. */
  batch: number
  /** How long a conversation's records wait for a goal (a prompt, `goalkeeper.goal`) before they are dropped. */
  goalWaitMs: number
  /** How long a settled record's key is kept, so a late duplicate still finds it. */
  duplicateWindowMs: number
  /** Between two sweeps (start() only). */
  sweepMs: number
}

const DEFAULTS: ApplierOptions = { batch: 200, goalWaitMs: 3_600_000, duplicateWindowMs: 86_400_000, sweepMs: 30_000 }

/**
 * The longest stretch the applier runs without letting the event loop turn, ms. On SQLite every
 * statement resolves at once, so without a pause its awaits never leave the microtask queue:
 * requests went unread and the group commit (a setImmediate) never ran until the backlog was gone.
 */
const SLICE_MS = 4

/** Sessions opened by these (src/hooks) record their tool calls from the hooks: telemetry adds nothing to them. */
const HOOK_SOURCES: readonly unknown[] = ['claude-code', 'codex', 'gemini-cli']

export interface ApplierDeps {
  db: SqlDatabase
  repo: OtlpRepository
  sessions: SessionsService
  settings: SettingsService
  clock: Clock
  metrics: Metrics
  log?: FastifyBaseLogger
}

type Usage = { seqs: number[]; tokens: number; cost_usd: number; costed: boolean }

export class Applier {
  /** Records stored by this process and not yet settled (what sheds load: service.ts). */
  backlog = 0
  private readonly deps: ApplierDeps
  private readonly options: ApplierOptions
  /** Conversations to look at, keyed `agent\nconversation`. */
  private readonly due = new Map<string, { agentId: string; conversation: string }>()
  private draining: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private sliceStart = 0
  /** Wakes waiting for their records' commit. */
  private readonly waking = new Set<Promise<void>>()
  /** Resolves when the queue next runs empty (tests, the benchmark). */
  private idleWaiters: (() => void)[] = []

  constructor(deps: ApplierDeps, options: Partial<ApplierOptions> = {}) {
    this.deps = deps
    this.options = { ...DEFAULTS, ...options }
  }

  log(log: FastifyBaseLogger): void {
    this.deps.log = log
  }

  /** `stored` records of these conversations were just stored: apply them. */
  wake(agentId: string, conversations: readonly string[], stored = 0): void {
    this.backlog += stored
    this.deps.metrics.otlpBacklog.set(this.backlog)
    for (const conversation of conversations) this.due.set(`${agentId}\n${conversation}`, { agentId, conversation })
    if (this.draining === undefined && !this.stopped) this.draining = this.drain()
  }

  /** Sweeps at once and then every `sweepMs`. */
  start(): void {
    const sweep = () => {
      this.sweep().catch((err: unknown) => this.deps.log?.error({ err }, 'OTLP sweep failed'))
    }
    sweep()
    this.timer = setInterval(sweep, this.options.sweepMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.draining
  }

  /** Wakes the conversations once `durable` resolves (their records' commit); a failed commit leaves nothing to apply. */
  wakeWhen(durable: Promise<void>, agentId: string, conversations: readonly string[], stored: number): void {
    const woken = durable.then(
      () => this.wake(agentId, conversations, stored),
      () => undefined,
    )
    this.waking.add(woken)
    void woken.finally(() => this.waking.delete(woken))
  }

  /** Resolves once nothing stored so far is still to be applied (tests, the benchmark). */
  async idle(): Promise<void> {
    while (this.waking.size > 0 || this.draining !== undefined) {
      await Promise.all(this.waking)
      if (this.draining !== undefined) await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
    }
  }

  /** Wakes the conversations with waiting records, and prunes keys past the duplicate window. */
  async sweep(): Promise<void> {
    for (const c of await this.deps.repo.waitingConversations(500)) this.wake(c.agent_id, [c.conversation])
    await this.deps.repo.prune(this.deps.clock() - this.options.duplicateWindowMs, 10_000)
  }

  private async drain(): Promise<void> {
    try {
      while (this.due.size > 0 && !this.stopped) {
        const [key, c] = this.due.entries().next().value!
        this.due.delete(key)
        try {
          // A full batch may have more behind it: its turn comes again after the others'.
          if (await this.apply(c.agentId, c.conversation)) this.due.set(key, c)
        } catch (err) {
          // Another process settled a record first: it is applying this conversation now.
          if (err instanceof Claimed) continue
          this.deps.metrics.otlpApplied.inc({ kind: 'any', outcome: 'failed' })
          this.deps.log?.error({ err, conversation: c.conversation }, 'applying OTLP records failed; the next sweep tries again')
        }
      }
    } finally {
      this.draining = undefined
      for (const resolve of this.idleWaiters.splice(0)) resolve()
    }
  }

  /** Applies a batch of the conversation's waiting records; true when there may be more. */
  private async apply(agentId: string, conversation: string): Promise<boolean> {
    const { repo, sessions } = this.deps
    const records = await repo.waiting(agentId, conversation, this.options.batch)
    if (records.length === 0) return false
    let session = await sessions.byExternalId(agentId, conversation)
    let opening: number | undefined
    if (session === undefined) {
      const first = records.find((r) => r.record.kind === 'goal') ?? records.find((r) => r.record.kind === 'prompt')
      if (first === undefined) {
        // Nothing to open it with yet: the records wait for a goal, for a while.
        if (this.deps.clock() - records[0]!.createdAt <= this.options.goalWaitMs) return false
        await this.settle(agentId, records, DROPPED)
        return records.length === this.options.batch
      }
      const r = first.record as Extract<ObservedRecord, { kind: 'goal' | 'prompt' }>
      session = await openToolSession(this.deps, agentId, { external: conversation, goal: r.text, metadata: { source: 'otlp', ...(r.service === undefined ? {} : { service: r.service }) } })
      opening = first.seq
    }
    if (session.status !== 'active' || HOOK_SOURCES.includes(session.metadata.source)) {
      await this.settle(agentId, records, DROPPED)
      return records.length === this.options.batch
    }
    const usage: Usage = { seqs: [], tokens: 0, cost_usd: 0, costed: false }
    let goalPrompt = session.goal
    for (const r of records) {
      await this.pause()
      const record = r.record
      if (record.kind === 'usage') {
        usage.seqs.push(r.seq)
        usage.tokens += record.tokens
        if (record.cost_usd !== undefined) {
          usage.cost_usd += record.cost_usd
          usage.costed = true
        }
      } else if (record.kind === 'step') {
        await this.step(agentId, session, r.seq, record.step, usage)
        usage.seqs = []
        usage.tokens = usage.cost_usd = 0
        usage.costed = false
      } else if (record.kind === 'prompt' && r.seq !== opening && record.text !== goalPrompt) {
        const uow = this.settling(agentId, [r.seq], null)
        await sessions.userPrompt(agentId, session.id, record.text, uow)
        goalPrompt = record.text
        this.applied('prompt', 1)
      } else {
        // The opening record, a goal when one is set, a prompt repeating the last one: nothing to do.
        await this.settle(agentId, [r], APPLIED)
      }
    }
    // A full batch of usage alone would come back whole: its sum goes on as one record.
    if (records.length === this.options.batch && usage.seqs.length === records.length) await this.fold(agentId, conversation, usage)
    return records.length === this.options.batch
  }

  /** Lets the event loop turn once this stretch has run SLICE_MS. */
  private async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return
    await nextTurn()
    this.sliceStart = performance.now()
  }

  private async step(agentId: string, session: Session, seq: number, step: StepInput, usage: Usage): Promise<void> {
    // Within what a step may report: an exporter's counts are not checked like a request's.
    const spend = {
      ...(usage.tokens > 0 ? { tokens: Math.min(Math.round(usage.tokens), STEP_TOKENS_MAX) } : {}),
      ...(usage.costed ? { cost_usd: Math.min(usage.cost_usd, STEP_COST_MAX) } : {}),
    }
    let stepNumber: number | null = null
    const uow = new UnitOfWork(this.deps.db)
    uow.also(async (result) => {
      stepNumber = (result as { step_number: number }).step_number
      await this.deps.repo.settle(agentId, [seq, ...usage.seqs], APPLIED, stepNumber)
    })
    await this.deps.sessions.step(agentId, session.id, { ...step, ...spend }, uow)
    this.applied('step', 1)
    if (usage.seqs.length > 0) this.applied('usage', usage.seqs.length)
  }

  /** A unit of work whose write settles `seqs` with it. */
  private settling(agentId: string, seqs: number[], stepNumber: number | null): UnitOfWork {
    const uow = new UnitOfWork(this.deps.db)
    uow.also(() => this.deps.repo.settle(agentId, seqs, APPLIED, stepNumber))
    return uow
  }

  private async settle(agentId: string, records: WaitingRecord[], state: typeof APPLIED | typeof DROPPED): Promise<void> {
    await this.deps.repo.settle(
      agentId,
      records.map((r) => r.seq),
      state,
    )
    for (const r of records) this.deps.metrics.otlpApplied.inc({ kind: r.record.kind, outcome: state === DROPPED ? 'dropped' : 'applied' })
    this.settled(records.length)
  }

  private async fold(agentId: string, conversation: string, usage: Usage): Promise<void> {
    const record: ObservedRecord = { kind: 'usage', tokens: usage.tokens, ...(usage.costed ? { cost_usd: usage.cost_usd } : {}) }
    await new UnitOfWork(this.deps.db).run(async () => {
      await this.deps.repo.settle(agentId, usage.seqs, APPLIED)
      await this.deps.repo.insert(agentId, [{ conversation, key: `usage-sum:${usage.seqs[0]}`, at: 0, record }], this.deps.clock())
    })
    this.settled(usage.seqs.length - 1)
  }

  private applied(kind: ObservedRecord['kind'], n: number): void {
    this.deps.metrics.otlpApplied.inc({ kind, outcome: 'applied' }, n)
    this.settled(n)
  }

  private settled(n: number): void {
    this.backlog = Math.max(0, this.backlog - n)
    this.deps.metrics.otlpBacklog.set(this.backlog)
  }
}
