/**
 * What a goal session keeps of an agent's turns when a coding agent's hooks drive it: the user's
 * later prompts, which join the goal (a user redirecting the agent is not the agent drifting),
 * and the "is it really done?" check when the agent stops, with its cap of blocks per user turn.
 */
import { tokenSet, truncateChars } from '../similarity/text.js'

/** A session's goal is at most this long (the API's limit, sessions/schemas.ts); the first prompt keeps half of it. */
export const GOAL_TEXT_MAX = 20_000
const FIRST_PROMPT_MAX = GOAL_TEXT_MAX / 2
const FOLLOW_UP_MAX = 1000
/** How a later prompt is joined to the goal text. */
const FOLLOW_UP_PREFIX = '\n\nThen: '
/** Open items a stop check names (the rest are counted). */
const OPEN_ITEMS_NAMED = 5

export interface AgentTurnJSON {
  /** The goal before any later prompt joined it; null while none has. */
  base: string | null
  follow_ups: string[]
  /** Stops answered with "carry on" since the user's last prompt. */
  stop_blocks: number
  /** A compaction is waiting for its recitation (absent: none). */
  recite?: boolean
}

export type StopOutcome = 'done' | 'open_items' | 'aborted'

/** The answer to an agent that wants to stop. */
export interface StopCheck {
  /** The reason to give the agent for carrying on, or null: let it stop. */
  block: string | null
  outcome: StopOutcome
  open_items: string[]
}

export class AgentTurn {
  private base: string | null = null
  private followUps: string[] = []
  private stopBlocks = 0
  private recite = false

  /**
   * The goal text once `prompt` joins `goal`: the first prompt, then the later ones each after
   * "Then: ", the oldest dropped first when they no longer fit. Null when the prompt adds nothing
   * (no content words, such as "ok" or "go on", or a prompt already joined).
   */
  join(goal: string, prompt: string): string | null {
    const text = truncateChars(prompt.trim(), FOLLOW_UP_MAX)
    if (tokenSet(text).size === 0 || this.followUps.includes(text) || text === (this.base ?? goal)) return null
    this.base ??= truncateChars(goal, FIRST_PROMPT_MAX)
    this.followUps.push(text)
    let joined = this.render()
    while (joined.length > GOAL_TEXT_MAX && this.followUps.length > 1) {
      this.followUps.shift()
      joined = this.render()
    }
    return joined
  }

  private render(): string {
    return [this.base!, ...this.followUps].join(FOLLOW_UP_PREFIX)
  }

  /** A new goal set outright (PUT goal): later prompts start over from it. */
  resetGoal(): void {
    this.base = null
    this.followUps = []
  }

  compacted(): void {
    this.recite = true
  }

  get recitePending(): boolean {
    return this.recite
  }

  recited(): void {
    this.recite = false
  }

  /** The user spoke: a new turn, with its own allowance of stop blocks. */
  newTurn(): void {
    this.stopBlocks = 0
  }

  /**
   * The agent wants to stop. With open items, it is asked to carry on, at most `maxBlocks` times
   * in a row per user turn; never after an `abort` (stopping is what that asked for).
   */
  stop(openItems: readonly string[], aborted: boolean, maxBlocks: number): StopCheck {
    const open_items = [...openItems]
    if (aborted) return { block: null, outcome: 'aborted', open_items }
    if (open_items.length === 0) return { block: null, outcome: 'done', open_items }
    if (this.stopBlocks >= maxBlocks) return { block: null, outcome: 'open_items', open_items }
    this.stopBlocks++
    return { block: carryOn(open_items), outcome: 'open_items', open_items }
  }

  toJSON(): AgentTurnJSON {
    return { base: this.base, follow_ups: [...this.followUps], stop_blocks: this.stopBlocks, ...(this.recite ? { recite: true } : {}) }
  }

  static fromJSON(json: AgentTurnJSON | undefined): AgentTurn {
    const t = new AgentTurn()
    if (json !== undefined) {
      t.base = json.base
      t.followUps = [...json.follow_ups]
      t.stopBlocks = json.stop_blocks
      t.recite = json.recite === true
    }
    return t
  }
}

/** The reason a blocked stop gives the model: what is open, and how to finish honestly. */
function carryOn(open: readonly string[]): string {
  const named = open.slice(0, OPEN_ITEMS_NAMED).map((item, i) => `${i + 1}. ${truncateChars(item, 200)}`)
  const more = open.length > OPEN_ITEMS_NAMED ? ` (and ${open.length - OPEN_ITEMS_NAMED} more)` : ''
  const n = open.length === 1 ? '1 item of your plan is' : `${open.length} items of your plan are`
  return (
    `goalkeeper: ${n} still open${more}: ${named.join('; ')}. Carry on with ${open.length === 1 ? 'it' : 'them'}; ` +
    'if an item is already done or no longer needed, update the todo list (mark it completed or remove it) before you stop.'
  )
}
