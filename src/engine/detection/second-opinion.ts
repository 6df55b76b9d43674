/**
 * A periodic second opinion (opt-in `config.second_opinion`, after Gemini CLI's loop check): after
 * `after` steps, then every `every` (sooner, after half as many, when the last answer was unsure),
 * the configured LLM reads the goal and the last 20 steps and answers whether the agent is making
 * progress, with a confidence. A confident "no" (at least 0.9), confirmed by a second call, answers
 * `replan` with the model's analysis as advice. The service asks, outside any transaction; this
 * holds the schedule, the prompt, the reading of the answer and what it does to a verdict. A
 * provider that fails or answers nothing usable changes no verdict.
 */
import { atLeast } from './escalation.js'
import type { StepVerification } from '../session/goal-state.js'
import type { LlmVerifyFn } from '../session/llm-verify.js'
import { truncateChars } from '../similarity/text.js'

export interface SecondOpinionConfig {
  /** Steps before the first opinion (default 10). */
  after?: number
  /** Steps between two opinions (default 10; half as many after an unsure answer). */
  every?: number
}

export const OPINION_DEFAULTS = { after: 10, every: 10 } as const
export const OPINION_MIN = 2
export const OPINION_MAX = 1000
/** Steps the model reads. */
export const OPINION_STEPS = 20
/** Confidence of a "no" that replans (once confirmed). */
export const CONFIDENT = 0.9
/** Below this an answer is unsure: the next opinion comes sooner. */
export const UNSURE = 0.7

export interface Opinion {
  progress: boolean
  confidence: number
  analysis: string
}

/** What the service brings to a step it asked about: the answer (null: the provider failed or said nothing usable) and whether a second call confirmed a confident "no". */
export interface OpinionOutcome {
  answer: Opinion | null
  confirmed: boolean
}

/** The verdict's `second_opinion`. */
export interface SecondOpinionReport extends Opinion {
  /** A confident "no" a second call agreed with: the step answers at least `replan`. */
  confirmed: boolean
}

export function opinionProblem(c: SecondOpinionConfig): [string, string] | null {
  for (const k of ['after', 'every'] as const) {
    const v = c[k]
    if (v !== undefined && !(Number.isInteger(v) && v >= OPINION_MIN && v <= OPINION_MAX)) return [`second_opinion/${k}`, `must be an integer in [${OPINION_MIN}, ${OPINION_MAX}]`]
  }
  return null
}

export interface OpinionStep {
  step_number: number
  description: string
  output: string
}

/**
 * The question; `doubt`: a first answer's analysis, for the confirming call, which checks it against
 * the steps rather than asking the same question twice at temperature 0.
 */
function buildOpinionPrompt(goal: string, steps: readonly OpinionStep[], doubt?: string): string {
  return [
    'You review an AI agent at work. Is it making progress toward its goal, or going in circles, stuck or off track?',
    `Goal: ${truncateChars(goal, 4000)}`,
    'Its last steps, oldest first:',
    ...steps.map((s) => `${s.step_number}. ${truncateChars(s.description.replace(/\s+/g, ' '), 300)} -> ${truncateChars(s.output.replace(/\s+/g, ' '), 200)}`),
    ...(doubt === undefined
      ? []
      : [`A first review found it is not making progress: ${truncateChars(doubt, 600)}`, 'Check that against the steps yourself; say progress true if the review is wrong.']),
    'Answer with JSON only: {"progress": <true or false>, "confidence": <0 to 1>, "analysis": "<at most two sentences: what is going wrong and what to do instead>"}',
  ].join('\n')
}

/** The answer's JSON object (also inside a code fence or prose), or null when it says nothing usable. */
export function parseOpinion(answer: string): Opinion | null {
  const json = /\{[\s\S]*\}/.exec(answer)
  if (json === null) return null
  try {
    const o = JSON.parse(json[0]) as Record<string, unknown>
    const confidence = typeof o.confidence === 'string' ? Number(o.confidence) : o.confidence
    if (typeof o.progress !== 'boolean' || typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) return null
    return { progress: o.progress, confidence, analysis: typeof o.analysis === 'string' ? truncateChars(o.analysis.trim(), 600) : '' }
  } catch {
    return null
  }
}

/** A confident "no": worth asking a second time before it replans. */
function confidentNo(o: Opinion | null): boolean {
  return o !== null && !o.progress && o.confidence >= CONFIDENT
}

/**
 * Asks `ask` (the configured LLM) about the last steps, and a second time to confirm a confident
 * "no". A call that fails or answers nothing usable counts as no answer: a failed first call
 * gives no opinion, a failed confirmation leaves the "no" unconfirmed.
 */
export async function askOpinion(ask: LlmVerifyFn, goal: string, steps: readonly OpinionStep[]): Promise<OpinionOutcome> {
  const once = async (doubt?: string): Promise<Opinion | null> => {
    try {
      return parseOpinion(String(await ask(buildOpinionPrompt(goal, steps, doubt))))
    } catch {
      return null
    }
  }
  const answer = await once()
  return { answer, confirmed: confidentNo(answer) && confidentNo(await once(answer!.analysis)) }
}

/** When the next opinion is due: the step number it comes with. */
export class OpinionSchedule {
  private nextAt: number
  private readonly every: number

  constructor(config: SecondOpinionConfig, nextAt?: number) {
    this.nextAt = nextAt ?? config.after ?? OPINION_DEFAULTS.after
    this.every = config.every ?? OPINION_DEFAULTS.every
  }

  due(step: number): boolean {
    return step >= this.nextAt
  }

  /**
   * Applies an opinion asked at `step` to its verdict (`second_opinion`; a confirmed confident
   * "no" answers at least `replan` with the analysis in `reasoning`) and schedules the next one:
   * half the interval after an unsure answer (or a confident "no" the second call did not confirm),
   * the whole after any other or a failure.
   */
  apply(step: number, outcome: OpinionOutcome, v: StepVerification & { second_opinion?: SecondOpinionReport }): void {
    const a = outcome.answer
    const confirmed = confidentNo(a) && outcome.confirmed
    const unsure = a !== null && (a.confidence < UNSURE || (confidentNo(a) && !confirmed))
    this.nextAt = step + (unsure ? Math.ceil(this.every / 2) : this.every)
    if (a === null) return
    v.second_opinion = { ...a, confirmed }
    if (!confirmed) return
    v.recommended_action = atLeast(v.recommended_action, 'replan')
    v.reasoning = `${v.reasoning}; second opinion (confidence ${a.confidence.toFixed(2)}, confirmed): not making progress${a.analysis === '' ? '' : `: ${a.analysis}`}`
  }

  toJSON(): number {
    return this.nextAt
  }
}
