/**
 * Busy but going nowhere (amplifier-app-cli #252): a stall with activity. Tool call after tool
 * call, none of which advanced a plan or todo item, touched a file not seen before in the session
 * or brought an answer not seen before (compared masked, output-mask.ts): searches with new
 * patterns that all find nothing, commands that all fail the same way, files read again. An idle
 * stall (the tracker's `stall_turns`) counts steps without evidence of the goal, and a test run or
 * a chore does not count there; here every call counts, and only news ends the run.
 */
import { readCall } from '../drift/code-entities.js'
import type { StepTool } from './loop-kinds.js'

/**
 * Calls in a row without news that make a busy stall, for a new session: on the real runs of
 * bench:detection the fewest that told no more runs that went well `replan` (docs/detection.md).
 */
export const DEFAULT_BUSY_AFTER = 8
export const MIN_BUSY_AFTER = 3
export const MAX_BUSY_AFTER = 1000
/** Answers and files remembered (the newest): news is what is not among them. */
const SEEN_MAX = 300

export interface BusyStall {
  /** Tool calls in a row without news, this one included. */
  count: number
  /** The step number of the first of them. */
  since: number
  /** One sentence the model can act on. */
  advice: string
}

export interface BusyJSON {
  run: number
  since: number
  results: string[]
  files: string[]
}

function remember(list: string[], set: Set<string>, item: string): boolean {
  if (set.has(item)) return false
  set.add(item)
  list.push(item)
  if (list.length > SEEN_MAX) set.delete(list.shift()!)
  return true
}

export class BusyWatch {
  private run = 0
  private since = 0
  private results: string[] = []
  private files: string[] = []
  private resultSet = new Set<string>()
  private fileSet = new Set<string>()

  /**
   * One step: a tool call with its answer's masked key, and whether it advanced the plan or the
   * todo list. A message step changes nothing. Returns the busy stall this call is part of once
   * the run reaches `after`, else null.
   */
  observe(step: number, tool: StepTool | undefined, resultKey: string, advanced: boolean, after: number): BusyStall | null {
    if (tool === undefined) return null
    let news = remember(this.results, this.resultSet, resultKey)
    for (const f of readCall(tool).files) if (remember(this.files, this.fileSet, f)) news = true
    if (news || advanced) {
      this.run = 0
      return null
    }
    if (this.run === 0) this.since = step
    this.run++
    if (this.run < after) return null
    return {
      count: this.run,
      since: this.since,
      advice: `The last ${this.run} tool calls (since step ${this.since}) brought nothing new: no plan item done, no new file, no answer not seen before. Stop and say what you are looking for and why the last attempts did not find it, then change approach.`,
    }
  }

  toJSON(): BusyJSON {
    return { run: this.run, since: this.since, results: [...this.results], files: [...this.files] }
  }

  static fromJSON(json: BusyJSON | undefined): BusyWatch {
    const w = new BusyWatch()
    if (json !== undefined) {
      w.run = json.run
      w.since = json.since
      w.results = [...json.results]
      w.files = [...json.files]
      w.resultSet = new Set(w.results)
      w.fileSet = new Set(w.files)
    }
    return w
  }
}
