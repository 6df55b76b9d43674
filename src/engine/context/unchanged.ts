/**
 * Reminders that don't nag (opt-in `config.skip_unchanged`): a goal reminder or recitation block
 * identical to the last one injected is not injected again until `resend_unchanged_after` turns
 * have passed since it was. Remembers, per kind, a hash of the last injected text and its turn.
 */
import { textKey } from '../detection/step-keys.js'

export type InjectedKind = 'goal_reminder' | 'recitation'
export const DEFAULT_RESEND_UNCHANGED_AFTER = 10

export interface UnchangedJSON {
  goal_reminder?: { key: string; turn: number }
  recitation?: { key: string; turn: number }
}

/** Why a block was left out, as /v1/turns and the recitation route report it. */
export interface UnchangedSkip {
  reason: 'unchanged'
  /** The turn (iteration) the identical block was last injected at. */
  last_injected_at: number
  /** The first turn at which it goes out again even if still unchanged. */
  resend_at: number
}

export class UnchangedFilter {
  private last: UnchangedJSON = {}

  /** The skip for `text` at `turn`, or null when it goes out (changed, never sent, or sent long enough ago). */
  check(kind: InjectedKind, text: string, turn: number, after: number): UnchangedSkip | null {
    const prev = this.last[kind]
    if (prev === undefined || prev.key !== textKey(text)) return null
    const resend_at = prev.turn + after
    // A turn number that went backwards (a new conversation, a replay) is not "within N turns".
    if (turn >= resend_at || turn < prev.turn) return null
    return { reason: 'unchanged', last_injected_at: prev.turn, resend_at }
  }

  record(kind: InjectedKind, text: string, turn: number): void {
    this.last[kind] = { key: textKey(text), turn }
  }

  toJSON(): UnchangedJSON {
    return structuredClone(this.last)
  }

  static fromJSON(json: UnchangedJSON | undefined): UnchangedFilter {
    const f = new UnchangedFilter()
    if (json !== undefined) f.last = structuredClone(json)
    return f
  }
}
