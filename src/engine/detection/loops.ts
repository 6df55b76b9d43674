/**
 * Loop kinds beyond the tracker's state hash, in the shapes open agent runtimes ship (OpenHands'
 * stuck detector, Gemini CLI's loop detection): an error that repeats, an A/B alternation, a
 * monologue, the same tool call. The tracker's `repeat` stays in GoalTracker (a state hash counted
 * over the whole session); this detector keeps a window of recent steps for the others and for
 * naming the steps a `repeat` involved.
 */
import { callKind, type StepTool } from '../drift/code-entities.js'
import { maskVolatile } from './output-mask.js'
import { stateHash } from '../drift/step-alignment.js'
import { cutText } from '../similarity/text.js'

export const LOOP_KINDS = ['repeat', 'error_repeat', 'alternation', 'monologue', 'same_call', 'same_result', 'error_cascade', 'same_edit'] as const
export type LoopKind = (typeof LOOP_KINDS)[number]

/**
 * repeat: 3 (GoalTracker's LOOP_THRESHOLD); error_repeat 3, monologue 3 and alternation over 6 from OpenHands;
 * same_call 5 from Gemini CLI; same_result 3; same_edit 3.
 */
export const DEFAULT_LOOP_THRESHOLDS: Readonly<Record<LoopKind, number>> = {
  repeat: 3,
  error_repeat: 3,
  alternation: 6,
  monologue: 3,
  same_call: 5,
  same_result: 3,
  error_cascade: 5,
  same_edit: 3,
}

/**
 * Kinds on unless a session lists its own: the ones that only look at the optional `tool` and
 * `error` fields, so a client that sends text alone gets the tracker's answers unchanged.
 */
export const DEFAULT_LOOP_KINDS: readonly LoopKind[] = ['repeat', 'error_repeat', 'same_call']

/** Least threshold per kind: fewer is not a repetition (an alternation needs two rounds of A/B). */
export const MIN_LOOP_THRESHOLD: Readonly<Record<LoopKind, number>> = {
  repeat: 2,
  error_repeat: 2,
  alternation: 4,
  monologue: 2,
  same_call: 2,
  same_result: 2,
  error_cascade: 3,
  same_edit: 2,
}
export const MAX_LOOP_THRESHOLD = 100

export function isLoopKind(x: unknown): x is LoopKind {
  return typeof x === 'string' && (LOOP_KINDS as readonly string[]).includes(x)
}

export type { StepTool } from '../drift/code-entities.js'

/** The optional fields a step may carry beside its description and output. */
export interface StepSignals {
  tool?: StepTool
  error?: boolean
  tokens?: number
  cost_usd?: number
}

export interface LoopSettings {
  kinds: ReadonlySet<LoopKind>
  thresholds: Readonly<Record<LoopKind, number>>
  exemptTools: ReadonlySet<string>
}

/** Steps kept: OpenHands looks at its last 20 events; a larger threshold of a kind that is on keeps that many. */
export function windowSize(s: LoopSettings): number {
  let n = LOOP_WINDOW
  for (const k of s.kinds) n = Math.max(n, s.thresholds[k])
  return n
}

/** A loop this step completed or continued: its kind, the steps involved and what repeats. */
export interface LoopFinding {
  kind: LoopKind
  /** Step numbers involved, oldest first (for `repeat`, those still in the window). */
  steps: number[]
  count: number
  /** The repeating action, short (`name({args})` or the description's start). */
  subject: string
  /** One plain sentence the model can act on. */
  advice: string
}

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

/** `name({...})` with sorted keys, so the same call is the same text however its args were ordered. */
export function toolCallText(tool: StepTool): string {
  return `${tool.name}(${canonicalJson(tool.args)})`
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/**
 * 53-bit hash of the lowercased, whitespace-collapsed, trimmed text (exact equality, unlike the
 * word-set state hash). One pass over the characters: a regex and toLowerCase per step cost ~20 µs
 * on a 500-character output, this ~1 µs.
 */
export function textKey(text: string): string {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  let pendingSpace = false
  let started = false
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i)
    if (c === 32 || (c >= 9 && c <= 13)) {
      pendingSpace = started
      continue
    }
    if (pendingSpace) {
      h1 = Math.imul(h1 ^ 32, 2654435761)
      h2 = Math.imul(h2 ^ 32, 1597334677)
      pendingSpace = false
    }
    started = true
    if (c >= 65 && c <= 90) c += 32
    else if (c > 127) c = text[i]!.toLowerCase().charCodeAt(0)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36)
}

/** The text the tracker's state hash reads for a step: a tool call counts as part of what was done. */
export function stepStateHash(description: string, output: string, tool?: StepTool): string {
  return stateHash(tool === undefined ? description : `${description}\n${toolCallText(tool)}`, output)
}

function label(text: string): string {
  const one = cutText(text, 4 * LABEL_MAX)
    .replace(/\s+/g, ' ')
    .trim()
  return one.length > LABEL_MAX ? `${cutText(one, LABEL_MAX - 1)}…` : one
}

function listSteps(steps: number[]): string {
  return steps.length <= 6 ? steps.join(', ') : `${steps.slice(0, 2).join(', ')} … ${steps.slice(-2).join(', ')}`
}

export function loopAdvice(kind: LoopKind, subject: string, count: number, steps: number[], other?: string): string {
  const at = `steps ${listSteps(steps)}`
  switch (kind) {
    case 'repeat':
      return `The same step with the same result has come back ${count} times (${at}): stop repeating "${subject}"; use what it returned or try another approach.`
    case 'error_repeat':
      return `"${subject}" failed ${count} times in a row (${at}): do not retry it as is; read the error and change the arguments or the approach.`
    case 'alternation':
      return `You are alternating between "${subject}" and "${other ?? '…'}" (${at}) without getting further: stop, decide what is missing, and take a different next step.`
    case 'monologue':
      return `You sent the same message ${count} times in a row with nothing happening between (${at}): act on it (call a tool) or ask something different.`
    case 'same_call':
      return `"${subject}" was called ${count} times in a row with the same arguments (${at}): its answer will not change; use it or call something else.`
    case 'error_cascade':
      return `The last ${count} tool calls all failed (${at}), the latest "${subject}": stop and read the errors; something they share (the environment, a path, a wrong assumption) needs fixing first.`
    case 'same_result':
      return `"${subject}" gave the same result ${count} times (${at}): what you changed between the runs did not change it; read the result and try something else.`
    case 'same_edit':
      return `The same edit "${subject}" was applied ${count} times in a row (${at}): each run changes the file again; look at the file as it is now and undo the duplicates before editing further.`
  }
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
      action: call === undefined ? `m:${textKey(description)}` : `t:${textKey(call)}`,
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
    const action = `t:${textKey(toolCallText(tool))}`
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
    const action = `t:${textKey(toolCallText(tool))}`
    const last = this.window.findLast((e) => e.tool)
    if (last === undefined || last.action !== action || last.result === '') return 0
    return this.run(
      (e) => e.action === action && e.result === last.result,
      (e) => !e.tool,
    ).length
  }

  /** Whether `tool` (with these arguments) is among the calls of steps `from`..`to` in the window. */
  calledIn(tool: StepTool, from: number, to: number): boolean {
    const action = `t:${textKey(toolCallText(tool))}`
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
