/**
 * Bookkeeping for reminders served without a write of their own (SessionEngineStore.remind):
 * which sessions hold some, the timer that writes them, and the write itself (one journal row
 * of kind `reminders` on top of the session's version).
 */
import type { DeferredReminder } from './ops.js'
import type { SessionStatements } from './repository.js'

/** The part of a cached session entry the write reads and moves on. */
export interface DeferredHolder {
  version: number
  pending: number
  deferred?: DeferredReminder[] | undefined
}

export class DeferredReminders {
  readonly deferMs: number
  private readonly dirty = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private readonly writeAll: (ids: string[]) => Promise<void>

  constructor(deferMs: number, writeAll: (ids: string[]) => Promise<void>) {
    this.deferMs = Math.max(0, deferMs)
    this.writeAll = writeAll
  }

  /** Session `id` holds deferred reminders: write them within deferMs. */
  mark(id: string): void {
    this.dirty.add(id)
    this.timer ??= setTimeout(() => void this.flush(), this.deferMs).unref()
  }

  forget(id: string): void {
    this.dirty.delete(id)
  }

  /** Writes every marked session's reminders now. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    if (this.dirty.size === 0) return Promise.resolve()
    const ids = [...this.dirty]
    this.dirty.clear()
    return this.writeAll(ids)
  }
}

/** Journals an entry's deferred reminders as one row on top of its version (if the row is still at it). */
export function writeDeferred(q: SessionStatements, id: string, entry: DeferredHolder): void {
  const items = entry.deferred
  entry.deferred = undefined
  if (items === undefined || items.length === 0) return
  const at = items[items.length - 1]!.at
  if (q.bumpVersion.run({ id, version: entry.version, updated_at: at }).changes !== 1) return
  entry.version += 1
  entry.pending += 1
  q.appendOp.run(id, entry.version, at, JSON.stringify({ kind: 'reminders', items }))
}
