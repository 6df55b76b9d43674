/**
 * Loop kinds beyond the tracker's state hash, in the shapes open agent runtimes ship (OpenHands'
 * stuck detector, Gemini CLI's loop detection): an error that repeats, an A/B alternation, a
 * monologue, the same tool call. The tracker's `repeat` stays in GoalTracker (a state hash counted
 * over the whole session); this detector keeps a window of recent steps for the others and for
 * naming the steps a `repeat` involved.
 */
import { callKind, type StepTool } from '../drift/code-entities.js'
import { maskVolatile } from './output-mask.js'
import { cutText } from '../similarity/text.js'
import { loopAdvice, type LoopFinding, type LoopKind, type LoopSettings, type StepSignals } from './loop-kinds.js'
import { stepStateHash, textKey, toolCallText } from './step-keys.js'

interface Entry {
  step: number
  /** The tracker's state hash (with the tool call): what `repeat` counts. */
  state: string
  /** The action: the tool call, or the normalized description. */
  action: string
  /** The observation: the whole normalized output. */
  obs: string
  /** The output with its volatile parts masked (output-mask.ts), hashed; '' when not read. */
  result: string
  tool: boolean
  error: boolean
  /** The call writes a file (an edit, a write: code-entities.ts `change`). */
  change: boolean
  label: string
}

/** An entry as stored: a tuple, as the window is in every snapshot (flags: 1 tool, 2 error, 4 change); `result` absent before same_result. */
type EntryJSON = [step: number, state: string, action: string, obs: string, flags: number, label: string, result?: string]

export interface LoopDetectorJSON {
  window: EntryJSON[]
}

export const LOOP_WINDOW = 20
const LABEL_MAX = 80

function label(text: string): string {
  const one = cutText(text, 4 * LABEL_MAX)
    .replace(/\s+/g, ' ')
    .trim()
  return one.length > LABEL_MAX ? `${cutText(one, LABEL_MAX - 1)}…` : one
}

/** Steps kept: OpenHands looks at its last 20 events; a larger threshold of a kind that is on keeps that many. */
export function windowSize(s: LoopSettings): number {
  let n = LOOP_WINDOW
  for (const k of s.kinds) n = Math.max(n, s.thresholds[k])
  return n
}

/** Kinds that compare a call's (masked) result. */
function readsResults(s: LoopSettings): boolean {
  return s.kinds.has('same_result') || s.kinds.has('error_repeat')
}

export class LoopDetector {
  private window: Entry[] = []

  /** Whether a step with this tool is left out of loop detection. */
  static exempt(settings: LoopSettings, signals: StepSignals): boolean {
    return signals.tool !== undefined && settings.exemptTools.has(signals.tool.name)
  }

  /**
   * Records the step (unless its tool is exempt) and returns the first loop of a kind other than
   * `repeat` that it completes, checked in the order error_repeat, same_result, error_cascade,
   * same_edit, same_call, alternation, monologue (the more specific first; the caller prefers them
   * to a `repeat` of the same step).
   */
  observe(step: number, description: string, output: string, signals: StepSignals, settings: LoopSettings): LoopFinding | null {
    if (LoopDetector.exempt(settings, signals)) return null
    const on = (k: LoopKind) => settings.kinds.has(k)
    const tool = signals.tool
    const call = tool === undefined ? undefined : toolCallText(tool)
    const e: Entry = {
      step,
      state: stepStateHash(description, output, tool),
      action: call === undefined ? textKey(description, 'm:') : textKey(call, 't:'),
      // Only alternation compares outputs exactly: the others need not hash a long output.
      obs: settings.kinds.has('alternation') ? textKey(output) : '',
      result: tool !== undefined && readsResults(settings) ? textKey(maskVolatile(output)) : '',
      tool: tool !== undefined,
      error: signals.error === true,
      change: tool !== undefined && on('same_edit') && callKind(tool) === 'change',
      label: label(call ?? description),
    }
    this.window.push(e)
    const keep = windowSize(settings)
    if (this.window.length > keep) this.window.splice(0, this.window.length - keep)
    return (
      (on('error_repeat') ? this.errorRepeat(settings.thresholds.error_repeat) : null) ??
      (on('same_result') ? this.sameResult(settings.thresholds.same_result) : null) ??
      (on('error_cascade') ? this.errorCascade(settings.thresholds.error_cascade) : null) ??
      (on('same_edit') ? this.sameEdit(settings.thresholds.same_edit) : null) ??
      (on('same_call') ? this.sameCall(settings.thresholds.same_call) : null) ??
      (on('alternation') ? this.alternation(settings.thresholds.alternation) : null) ??
      (on('monologue') ? this.monologue(settings.thresholds.monologue) : null)
    )
  }

  /** The tracker's `repeat` as a finding: the steps in the window with this step's state. */
  repeatFinding(count: number): LoopFinding | null {
    const last = this.window.at(-1)
    if (last === undefined) return null
    const steps = this.window.filter((e) => e.state === last.state).map((e) => e.step)
    return { kind: 'repeat', steps, count, subject: last.label, advice: loopAdvice('repeat', last.label, count, steps) }
  }

  /**
   * The calls in a row (newest last, message steps between not counted) that are `tool` with the
   * same arguments: how far this call is from a `same_call` loop.
   */
  sameCallsBefore(tool: StepTool): number {
    const action = textKey(toolCallText(tool), 't:')
    return this.run(
      (e) => e.action === action,
      (e) => !e.tool,
    ).length
  }

  /**
   * The calls in a row (message steps between not counted) that are `tool` with the same
   * arguments and were answered alike (masked): how far this call is from a `same_result` loop
   * it would complete with nothing done between. 0 when results are not read.
   */
  sameResultsBefore(tool: StepTool): number {
    const action = textKey(toolCallText(tool), 't:')
    const last = this.window.findLast((e) => e.tool)
    if (last === undefined || last.action !== action || last.result === '') return 0
    return this.run(
      (e) => e.action === action && e.result === last.result,
      (e) => !e.tool,
    ).length
  }

  /** Whether `tool` (with these arguments) is among the calls of steps `from`..`to` in the window. */
  calledIn(tool: StepTool, from: number, to: number): boolean {
    const action = textKey(toolCallText(tool), 't:')
    return this.window.some((e) => e.step >= from && e.step <= to && e.action === action)
  }

  /** The newest step in the window: its number and its masked result key ('' when results are not read). */
  get newest(): { step: number; result: string } | undefined {
    return this.window.at(-1)
  }

  /** The state hash of the newest step in the window. */
  get lastState(): string | undefined {
    return this.window.at(-1)?.state
  }

  reset(): void {
    this.window = []
  }

  /** The newest run of entries (newest last) that `same` accepts, walking back from the end. */
  private run(same: (e: Entry) => boolean, skip: (e: Entry) => boolean = () => false): Entry[] {
    const out: Entry[] = []
    for (let i = this.window.length - 1; i >= 0; i--) {
      const e = this.window[i]!
      if (skip(e)) continue
      if (!same(e)) break
      out.unshift(e)
    }
    return out
  }

  private finding(kind: LoopKind, run: Entry[], other?: string): LoopFinding {
    const steps = run.map((e) => e.step)
    const subject = run.at(-1)!.label
    return { kind, steps, count: run.length, subject, advice: loopAdvice(kind, subject, run.length, steps, other) }
  }

  /**
   * OpenHands: the same action answered by an error, n times in a row. Here "in a row" is the
   * action's own attempts: steps of other actions between (an agent thinking before it retries)
   * do not break the run, a success of the action does.
   */
  private errorRepeat(n: number): LoopFinding | null {
    const last = this.window.at(-1)!
    if (!last.error) return null
    // Reading the result: the same call failing another way (another error) is not the same loop.
    const run = this.run(
      (e) => e.error && e.result === last.result,
      (e) => e.action !== last.action,
    )
    return run.length >= n ? this.finding('error_repeat', run) : null
  }

  /**
   * The same call that writes a file, with the same arguments, n times in a row (messages between
   * do not count), whatever came back: applying an edit again is never progress, and its answer
   * changes only because the file does (an insert at line 1 grows it each time).
   */
  private sameEdit(n: number): LoopFinding | null {
    const last = this.window.at(-1)!
    if (!last.change) return null
    const run = this.run(
      (e) => e.action === last.action,
      (e) => !e.tool,
    )
    return run.length >= n ? this.finding('same_edit', run) : null
  }

  /** Gemini CLI: the same tool and arguments n times in a row, whatever came back (messages between do not count). */
  private sameCall(n: number): LoopFinding | null {
    const last = this.window.at(-1)!
    if (!last.tool) return null
    const run = this.run(
      (e) => e.action === last.action,
      (e) => !e.tool,
    )
    return run.length >= n ? this.finding('same_call', run) : null
  }

  /**
   * The same call answered by the same result (volatile parts masked) n times: other steps between
   * do not break the run (an agent editing between two runs of the tests that fail alike), a
   * different result of that call does (polling whose answer moves, a file read after a change).
   */
  private sameResult(n: number): LoopFinding | null {
    const last = this.window.at(-1)!
    if (!last.tool || last.result === '') return null
    const run = this.run(
      (e) => e.result === last.result,
      (e) => e.action !== last.action,
    )
    return run.length >= n ? this.finding('same_result', run) : null
  }

  /**
   * n tool calls in a row failed, not all the same call (that is error_repeat): the agent keeps
   * trying different things that all fail. Messages between do not break the run.
   */
  private errorCascade(n: number): LoopFinding | null {
    const run = this.run(
      (e) => e.error,
      (e) => !e.tool,
    )
    if (run.length < n || run.every((e) => e.action === run[0]!.action)) return null
    return this.finding('error_cascade', run)
  }

  /** OpenHands: over the last n steps, A/B/A/B…: every step equals (action and observation) the one two back, and A ≠ B. */
  private alternation(n: number): LoopFinding | null {
    const w = this.window
    if (w.length < n) return null
    const tail = w.slice(-n)
    const pair = (e: Entry) => `${e.action}|${e.obs}`
    const a = pair(tail[tail.length - 1]!)
    const b = pair(tail[tail.length - 2]!)
    if (a === b) return null
    for (let i = 2; i < tail.length; i++) if (pair(tail[i]!) !== pair(tail[i - 2]!)) return null
    return this.finding('alternation', tail, tail[tail.length - 2]!.label)
  }

  /** OpenHands: the same agent message (no tool call) n times in a row with no action between. */
  private monologue(n: number): LoopFinding | null {
    const last = this.window.at(-1)!
    if (last.tool) return null
    const run = this.run((e) => !e.tool && e.action === last.action)
    return run.length >= n ? this.finding('monologue', run) : null
  }

  toJSON(): LoopDetectorJSON {
    return { window: this.window.map((e) => [e.step, e.state, e.action, e.obs, (e.tool ? 1 : 0) | (e.error ? 2 : 0) | (e.change ? 4 : 0), e.label, e.result]) }
  }

  static fromJSON(json: LoopDetectorJSON | undefined): LoopDetector {
    const d = new LoopDetector()
    d.window = (json?.window ?? []).map(([step, state, action, obs, flags, label, result]) => ({
      step,
      state,
      action,
      obs,
      tool: (flags & 1) !== 0,
      error: (flags & 2) !== 0,
      change: (flags & 4) !== 0,
      label,
      result: result ?? '',
    }))
    return d
  }
}
