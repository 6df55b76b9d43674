/**
 * Reading on borrowed money: past a share of its budget (`at`, default half), an agent whose last
 * `calls` tool calls (default 10) only read, searched or tidied up (no file written, nothing run,
 * no plan or todo item done) is told to `replan`. Exploring is what a run does first; a run that
 * is still only exploring once half its money is gone is the run that spends the rest the same
 * way (the SWE-agent runs of bench:detection that ran out of their cost budget, docs/detection.md).
 * Each call sends more context than the one before, so the second half of a budget buys fewer
 * steps than the first: the warning has to come while some are left.
 */
import { callCommand, callKind, type StepTool } from '../drift/code-entities.js'

export interface BudgetStallConfig {
  /** The budget fraction from which the watch answers (default DEFAULT_BUDGET_STALL.at). */
  at?: number
  /** Tool calls in a row without work that answer `replan` (default DEFAULT_BUDGET_STALL.calls). */
  calls?: number
}

/** What a new session gets: measured on the real runs of bench:detection (docs/detection.md). */
export const DEFAULT_BUDGET_STALL: Readonly<Required<BudgetStallConfig>> = { at: 0.5, calls: 10 }
export const MIN_BUDGET_STALL_CALLS = 3
export const MAX_BUDGET_STALL_CALLS = 1000

export interface BudgetStall {
  /** Tool calls in a row that wrote nothing, ran nothing and advanced nothing, this one included. */
  count: number
  /** The step number of the first of them. */
  since: number
  /** The budget fraction spent after this step. */
  budget_fraction: number
  /** One sentence the model can act on. */
  advice: string
}

export interface BudgetStallJSON {
  run: number
  since: number
}

/** The config's problem (a field and why), or null: `at` in (0, 1), `calls` an integer in range. */
export function budgetStallProblem(c: BudgetStallConfig | false): [string, string] | null {
  if (c === false) return null
  if (c.at !== undefined && !(typeof c.at === 'number' && c.at > 0 && c.at < 1)) return ['budget_stall/at', 'must be a fraction in (0, 1)']
  if (c.calls !== undefined && !(Number.isInteger(c.calls) && c.calls >= MIN_BUDGET_STALL_CALLS && c.calls <= MAX_BUDGET_STALL_CALLS)) {
    return ['budget_stall/calls', `must be an integer in [${MIN_BUDGET_STALL_CALLS}, ${MAX_BUDGET_STALL_CALLS}]`]
  }
  return null
}

/**
 * A shell command that writes a file: an in-place `sed`, a redirect into a file (not `/dev/null`,
 * not `2>&1`), `tee`, `patch`, `git apply`. Read on the command's first line only: the lines after
 * it are a here-document's text (`cat <<'EOF' > fix.py`), not commands.
 */
const SHELL_WRITE = /\bsed\s+(-\w+\s+)*-i|(?<![\d&>])>>?\s*(?!\/dev\/null|&)[\w./'"$~-]|\btee\s|\bpatch\s|\bgit\s+apply\b/

/**
 * `work`: the call changes or runs something; `reading`: it reads, searches or tidies up; null: a
 * tool of the agent's own, which says nothing either way (an airline agent's `book_reservation`).
 */
export function callWork(tool: StepTool): 'work' | 'reading' | null {
  const kind = callKind(tool)
  if (kind === 'change' || kind === 'run') return 'work'
  if (kind === 'other') return null
  const command = callCommand(tool)
  return command !== undefined && SHELL_WRITE.test(command.split('\n', 1)[0]!) ? 'work' : 'reading'
}

export class BudgetStallWatch {
  private run = 0
  private since = 0

  /**
   * One tool call (message steps and exempt tools are not passed in; a call of the agent's own
   * tools leaves the run as it is), whether it advanced the plan or the todo list, and the budget
   * fraction after it (null: no budget). Returns the stall once the run of calls without work
   * reaches `calls` with at least `at` of the budget spent, else null.
   */
  observe(step: number, tool: StepTool, advanced: boolean, fraction: number | null, { at, calls }: Required<BudgetStallConfig>): BudgetStall | null {
    const work = callWork(tool)
    if (advanced || work === 'work') {
      this.run = 0
      return null
    }
    if (work === null) return null
    if (this.run === 0) this.since = step
    this.run++
    if (fraction === null || fraction < at || this.run < calls) return null
    return {
      count: this.run,
      since: this.since,
      budget_fraction: fraction,
      advice: `${Math.floor(fraction * 100)}% of the budget is spent and the last ${this.run} tool calls (since step ${this.since}) only read or searched: nothing written, run or done. Decide now what to change, make the change and test it, or say what is missing, while budget is left.`,
    }
  }

  toJSON(): BudgetStallJSON {
    return { run: this.run, since: this.since }
  }

  static fromJSON(json: BudgetStallJSON | undefined): BudgetStallWatch {
    const w = new BudgetStallWatch()
    if (json !== undefined) {
      w.run = json.run
      w.since = json.since
    }
    return w
  }
}
