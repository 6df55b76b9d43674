/**
 * OTLP exports on goal sessions. An export request is read into records (spans.ts, logs.ts),
 * ordered by start time, and stored under their keys in the request's transaction: what was
 * there already (a retried or repeated export) inserts nothing, and the answer leaves only once
 * the rest is durable. The records are then applied to their conversations' sessions by the
 * Applier, after the answer: each conversation's in the order stored, a step (with the usage
 * recorded before it) or a later prompt written in one transaction with its records' settling, so
 * no record is applied twice, whichever process or replica gets there first.
 */
import type { SqlDatabase } from '../db/database.js'
import type { Clock } from '../engine/clock.js'
import { tooMany } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { SettingsService } from '../reminders/settings.js'
import type { SessionsService } from '../sessions/service.js'
import { readLogs } from './logs.js'
import type { Observed } from './observed.js'
import type { ExportRequest, Signal } from './proto.js'
import { OtlpRepository } from './repository.js'
import { readSpans, type ReadResult } from './spans.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import { Applier, type ApplierOptions } from './applier.js'

export interface OtlpDeps {
  db: SqlDatabase
  sessions: SessionsService
  settings: SettingsService
  clock: Clock
  metrics: Metrics
  /** Records waiting to be applied past which exports are turned away (429) until the applier catches up. */
  maxBacklog: number
  applier?: Partial<ApplierOptions>
}

/** Seconds an exporter turned away is asked to wait. */
const BACKLOG_RETRY_AFTER_S = 2

export interface IngestResult {
  rejected: number
  /** Why some were rejected ('' when none were). */
  reason: string
}

export class OtlpService {
  private readonly repo: OtlpRepository
  readonly applier: Applier
  private readonly db: SqlDatabase
  private readonly settings: SettingsService
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly maxBacklog: number

  constructor(deps: OtlpDeps) {
    this.db = deps.db
    this.settings = deps.settings
    this.clock = deps.clock
    this.metrics = deps.metrics
    this.maxBacklog = deps.maxBacklog
    this.repo = new OtlpRepository(deps.db)
    this.applier = new Applier({ ...deps, repo: this.repo }, deps.applier)
  }

  /** Throws a 429 while the backlog is full: an export is turned away before its body is read and decoded. */
  admit(): void {
    if (this.applier.backlog >= this.maxBacklog) {
      throw tooMany(`${this.applier.backlog} records are waiting to be applied; retry in ${BACKLOG_RETRY_AFTER_S} s.`, BACKLOG_RETRY_AFTER_S)
    }
  }

  /** Stores what `request` says (once admit() let it in); the applier takes it from there once it has committed. */
  async ingest<S extends Signal>(agentId: string, signal: S, request: ExportRequest<S>, uow: UnitOfWork): Promise<IngestResult> {
    const { tool_output } = (await this.settings.get(agentId)).hooks
    const read: ReadResult = signal === 'traces' ? readSpans(request as ExportRequest<'traces'>, { tool_output }) : readLogs(request as ExportRequest<'logs'>, { tool_output })
    const observed = ordered(read.observed)
    const inserted = observed.length === 0 ? 0 : await uow.run(() => this.repo.insert(agentId, observed, this.clock()), { atomic: observed.length <= 500 })
    this.metrics.otlpRecords.inc({ signal, outcome: 'new' }, inserted)
    if (observed.length > inserted) this.metrics.otlpRecords.inc({ signal, outcome: 'duplicate' }, observed.length - inserted)
    if (read.rejected > 0) this.metrics.otlpRecords.inc({ signal, outcome: 'rejected' }, read.rejected)
    if (inserted > 0) this.applier.wakeWhen(this.db.committed(), agentId, [...new Set(observed.map((o) => o.conversation))], inserted)
    return { rejected: read.rejected, reason: read.reason }
  }

  close(): Promise<void> {
    return this.applier.stop()
  }
}

/** By start time (stable: ties keep the request's order), each key once. */
function ordered(observed: Observed[]): Observed[] {
  const seen = new Set<string>()
  const unique = observed.filter((o) => {
    const k = `${o.conversation}\n${o.key}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  return unique
    .map((o, i) => ({ o, i }))
    .sort((a, b) => a.o.at - b.o.at || a.i - b.i)
    .map(({ o }) => o)
}
