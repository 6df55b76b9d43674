/**
 * The pieces a goal reminder is made of: user text cleaned to one line and clipped to a token cap
 * (memoized, as reminders repeat the same goal and pitfalls every turn), and the numbers it shows.
 * Kept apart from GoalReminderInjector, which holds the state and lays the segments out.
 */
import { cachedClip, oneLine } from './token-fit.js'

/** How much of the goal reminder to show: by turn (goal-reminder.ts). */
export type ReminderMode = 'full' | 'compact' | 'ultra_compact'

/**
 * Token caps for user-provided pieces, so reminders stay near their budgets (full ~80–120,
 * compact ~40–60, ultra ~20–30 tokens). The fixed brackets cost at most 22 tokens in ultra
 * (goal, progress, drift: worst case 30 in all), 40 in compact (typical goal + progress + drift
 * ~45, worst case with sub-goal and pitfall 76) and 47 in full, where the pitfalls and tried
 * approaches (up to max_pitfalls / max_tried of 16 tokens each) come on top. A clipped piece
 * ends with "...".
 */
export const GOAL_TOKEN_CAP: Readonly<Record<ReminderMode, number>> = {
  full: 40,
  compact: 16,
  ultra_compact: 8,
}
/** Cap for one pitfall / tried approach / summary / sub-goal in full mode. */
export const FULL_ITEM_TOKEN_CAP = 16
/** Cap for the sub-goal and the most recent pitfall in compact mode. */
export const COMPACT_ITEM_TOKEN_CAP = 10

const ELLIPSIS = '...'

/** One line, and brackets swapped for parentheses so an item cannot open or close a bracket. */
function clean(text: string): string {
  return oneLine(text).replace(/\[/g, '(').replace(/\]/g, ')')
}

/** Clipped pieces by cap, then by raw text: nested maps avoid building a key string per call. */
const pieces = new Map<number, Map<string, string>>()
const PIECE_LIMIT = 1024

export function piece(text: string, cap: number): string {
  let byText = pieces.get(cap)
  if (byText === undefined) pieces.set(cap, (byText = new Map()))
  let out = byText.get(text)
  if (out === undefined) {
    out = cachedClip(clean(text), cap, ELLIPSIS)
    if (byText.size >= PIECE_LIMIT) byText.clear()
    byText.set(text, out)
  }
  return out
}

/** A progress fraction as a whole percent, clamped to [0, 100]; 0 when not finite. */
export function percent(pct: number): number {
  return Number.isFinite(pct) ? Math.round(Math.min(1, Math.max(0, pct)) * 100) : 0
}

/** A step count as shown: truncated, 0 when not finite. */
export function intOr0(n: number): number {
  return Number.isFinite(n) ? Math.trunc(n) : 0
}

/** The newest `max` items, oldest first. */
export function newest(list: readonly string[], max: number): string[] {
  return max <= 0 ? [] : list.slice(-max)
}
