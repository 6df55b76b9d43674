/**
 * The verdict's alignment when a session reads steps for evidence (`config.alignment:
 * "evidence"`, the default of new sessions): what a step shows about the goal, read the way an
 * engineer would, instead of keyword alignment's "one shared keyword makes a step aligned".
 *
 * - On the goal, strongest first: the call touches a file the goal names; the step names a
 *   symbol or error the goal names; the call works on a file the session already changed; its
 *   output shows a symbol or error the goal names; the text shares specific words with the goal or
 *   the plan step in focus (one rare word, an identifier or a number, or two ordinary words: one
 *   ordinary word such as "check" is not evidence); the session's similarity mode scores the text
 *   at or above its threshold.
 * - Neutral: housekeeping (listing, `cd`, `git diff`, installing, a todo update) and a step that
 *   runs something (the tests, a script) without naming anything of the goal: 0.5, which moves
 *   neither drift nor the stall counter.
 * - Off the goal: a message sharing no word with the goal or the plan step in focus (keyword alignment's
 *   0.15); one sharing only ordinary words is neutral in `lexical` and graded by the drift check's
 *   severity in `enhanced` and `embeddings`; a tool call counts at half that strength.
 *
 * Progress (the stall counter reset) needs real evidence: a file or symbol of the goal, a change to
 * a file of the session, or specific shared words; the plan advances only on specific words shared
 * with the plan step in focus (or its next). The reader keeps the files the session changed.
 */
import { addEntities, entitiesOf, readCall, type CallReading, type Entities } from './code-entities.js'
import type { DriftSeverity } from './drift-severity.js'
import type { SimilarityMode } from '../similarity/goal-scorer.js'
import type { StepSignals } from '../detection/loop-kinds.js'
import { PlanTerms } from '../session/plan-terms.js'
import { normalizeText } from '../similarity/text-normalize.js'
import { wordInfo, wordRank } from '../similarity/word-info.js'

/** A shared word this rare (its frequency rank) or rarer is specific on its own. */
const SPECIFIC_RANK = 5000
/** Files the session changed, remembered for reading later calls (the newest kept). */
const WORKING_FILES_MAX = 50
/** The alignment of a step sharing nothing with the goal (keyword alignment's BASE_ALIGNMENT). */
const OFF = 0.15
const NEUTRAL = 0.5

export interface Evidence {
  score: number
  reasoning: string
  /** Real evidence of work on the goal: resets the stall counter (unless the step repeats an earlier one). */
  progress: boolean
  /** Evidence for the plan step in focus or the next: advances the plan. */
  plan: boolean
  /** Neither for nor against: drift and the stall counter stay. */
  neutral: boolean
  /**
   * Read from what the step touches or runs (files and symbols the goal names, the session's own
   * files, a shell command naming nothing of the goal), which the drift check's text similarity
   * cannot see, rather than from shared words, which it weighs better: with `drift_evidence` the
   * drift check defers to this reading.
   */
  concrete: boolean
}

/** The drift check's reading of the text: the mode that scored it and the severity (graded per mode against its threshold). */
export interface TextSimilarity {
  mode: SimilarityMode
  severity: DriftSeverity
}

/** How far off a text sharing nothing with the goal reads, by its drift severity (non-lexical modes). */
const OFF_DEPTH: Readonly<Record<DriftSeverity, number>> = { none: 0, low: 0.25, moderate: 0.5, high: 0.75, critical: 1 }

export interface StepReaderJSON {
  files: string[]
}

interface Words {
  stems: Set<string>
  specific: Set<string>
}

/** A word's stem and whether it is specific; null when it is skipped. Memoized: words repeat a lot. */
const WORD_CACHE_MAX = 50_000
const wordCache = new Map<string, { stem: string; specific: boolean } | null>()

function wordOf(w: string): { stem: string; specific: boolean } | null {
  let out = wordCache.get(w)
  if (out === undefined) {
    const info = w.length < 3 ? null : wordInfo(w)
    if (info === null) out = null
    else {
      const rank = wordRank(w)
      out = { stem: info.stem, specific: rank === undefined || rank >= SPECIFIC_RANK || w.includes('_') || /\d/.test(w) }
    }
    if (wordCache.size >= WORD_CACHE_MAX) wordCache.clear()
    wordCache.set(w, out)
  }
  return out
}

/** Content stems of a text and which of them are specific (rare, unlisted, an identifier or a number). */
function wordsOf(text: string): Words {
  const stems = new Set<string>()
  const specific = new Set<string>()
  const add = (w: string) => {
    const x = wordOf(w)
    if (x === null) return
    stems.add(x.stem)
    if (x.specific) specific.add(x.stem)
  }
  for (const m of normalizeText(text).matchAll(/[a-z0-9_]+/g)) {
    add(m[0])
    if (m[0].includes('_')) for (const part of m[0].split('_')) add(part)
  }
  return { stems, specific }
}

/** The shared words' evidence: specific ones, or at least two ordinary ones; their list when there is evidence. */
function shared(step: Words, ref: Words): string[] {
  const common: string[] = []
  const rare: string[] = []
  for (const s of step.stems) if (ref.stems.has(s)) (step.specific.has(s) || ref.specific.has(s) ? rare : common).push(s)
  return rare.length > 0 || common.length >= 2 ? [...rare, ...common] : []
}

function hit(set: ReadonlySet<string>, items: Iterable<string>): string | undefined {
  for (const x of items) if (set.has(x)) return x
  return undefined
}

// A goal's reading never changes, so sessions loaded again (on every request without a cache hit)
// share one per goal text, the most recently used kept.
const GOAL_CACHE_MAX = 512
const goals = new Map<string, { entities: Entities; words: Words }>()

function readGoal(goal: string): { entities: Entities; words: Words } {
  let read = goals.get(goal)
  if (read !== undefined) goals.delete(goal)
  else {
    read = { entities: entitiesOf(goal), words: wordsOf(goal) }
    if (goals.size >= GOAL_CACHE_MAX) goals.delete(goals.keys().next().value!)
  }
  goals.set(goal, read)
  return read
}

export class StepReader {
  private readonly goal: Entities
  private readonly goalWords: Words
  private plan = new PlanTerms<Words>([], wordsOf)
  private files: string[] = []

  constructor(goal: string) {
    const read = readGoal(goal)
    this.goal = read.entities
    this.goalWords = read.words
  }

  setPlan(steps: readonly string[]): void {
    this.plan = new PlanTerms([...steps], wordsOf)
  }

  /**
   * Reads one step against the goal, the plan steps in focus (`focus`: indexes of the current
   * one and the next) and the files the session changed; remembers the files this call changes.
   */
  read(description: string, output: string, signals: StepSignals, focus: readonly number[], text: TextSimilarity): Evidence {
    const call = signals.tool === undefined ? null : readCall(signals.tool)
    const said = call === null ? description : `${description}\n${call.text}`
    const words = wordsOf(said)
    const planTerms = focus
      .map((i) => this.plan.at(i))
      .map((terms) => (terms === undefined ? [] : shared(words, terms)))
      .find((t) => t.length > 0)
    const planHit = planTerms !== undefined
    const ev = this.positive(said, output, call, words, text)
    if (call?.kind === 'change') this.remember(call.files)
    if (planHit) {
      const why = `plan terms [${planTerms.slice(0, 6).join(', ')}]`
      return ev === null
        ? { score: 0.575, reasoning: why, progress: true, plan: true, neutral: false, concrete: false }
        : { ...ev, reasoning: `${ev.reasoning}; ${why}`, progress: true, plan: true, neutral: false }
    }
    if (ev !== null) return { ...ev, plan: false, neutral: false }
    if (call !== null && (call.kind === 'chore' || call.kind === 'run')) {
      const reasoning = call.kind === 'chore' ? 'housekeeping call: neutral' : 'runs something without naming the goal: neutral'
      return { score: NEUTRAL, reasoning, progress: false, plan: false, neutral: true, concrete: true }
    }
    const off = this.offScore(words, text, focus)
    if (off === NEUTRAL) return { score: NEUTRAL, reasoning: 'nothing to compare: neutral', progress: false, plan: false, neutral: true, concrete: false }
    // A call that reads or changes files is work in the repository even when its words are not the goal's.
    const score = call === null ? off : NEUTRAL - (NEUTRAL - off) / 2
    return { score, reasoning: call === null ? 'no evidence of the goal' : 'a call naming nothing of the goal', progress: false, plan: false, neutral: false, concrete: false }
  }

  private positive(said: string, output: string, call: CallReading | null, words: Words, text: TextSimilarity): Omit<Evidence, 'plan' | 'neutral'> | null {
    if (call !== null) {
      const f = hit(this.goal.files, call.files)
      if (f !== undefined) return { score: 0.9, reasoning: `touches ${f}, named by the goal`, progress: true, concrete: true }
    }
    const named = addEntities(said, { files: new Set(), symbols: new Set() })
    const sym = hit(this.goal.symbols, named.symbols) ?? hit(this.goal.files, named.files)
    if (sym !== undefined) return { score: 0.85, reasoning: `names ${sym}, named by the goal`, progress: true, concrete: true }
    if (call !== null) {
      const w = hit(new Set(this.files), call.files)
      if (w !== undefined) return { score: 0.7, reasoning: `works on ${w}, which this session changed`, progress: call.kind === 'change', concrete: true }
    }
    const terms = shared(words, this.goalWords)
    if (terms.length > 0) return { score: Math.min(1, 0.575 + 0.1 * (terms.length - 1)), reasoning: `goal terms [${terms.slice(0, 6).join(', ')}]`, progress: true, concrete: false }
    if (output !== '') {
      const seen = addEntities(output.slice(0, 4000), { files: new Set(), symbols: new Set() }, true)
      const o = hit(this.goal.symbols, seen.symbols)
      if (o !== undefined) return { score: 0.65, reasoning: `its output shows ${o}, named by the goal`, progress: true, concrete: true }
    }
    if (text.mode !== 'lexical' && text.severity === 'none') {
      return { score: 0.6, reasoning: `${text.mode} similarity at or above its threshold`, progress: false, concrete: false }
    }
    return null
  }

  /**
   * How far off a text with no evidence for the goal is: sharing no word at all with the goal or
   * the plan steps in focus, keyword alignment's 0.15; sharing some ordinary word, neither for nor against
   * (lexical) or graded by the drift check's severity.
   */
  private offScore(words: Words, text: TextSimilarity, focus: readonly number[]): number {
    if (words.stems.size === 0 || this.goalWords.stems.size === 0) return NEUTRAL
    const refs = [this.goalWords, ...focus.flatMap((i) => this.plan.at(i) ?? [])]
    let touches = false
    for (const s of words.stems) if (refs.some((r) => r.stems.has(s))) touches = true
    if (!touches) return OFF
    return text.mode === 'lexical' ? NEUTRAL : NEUTRAL - (NEUTRAL - OFF) * OFF_DEPTH[text.severity]
  }

  private remember(files: readonly string[]): void {
    for (const f of files) {
      const i = this.files.indexOf(f)
      if (i >= 0) this.files.splice(i, 1)
      this.files.push(f)
    }
    if (this.files.length > WORKING_FILES_MAX) this.files.splice(0, this.files.length - WORKING_FILES_MAX)
  }

  toJSON(): StepReaderJSON {
    return { files: [...this.files] }
  }

  static fromJSON(goal: string, plan: readonly string[], json: StepReaderJSON | undefined): StepReader {
    const r = new StepReader(goal)
    r.setPlan(plan)
    r.files = [...(json?.files ?? [])]
    return r
  }
}
