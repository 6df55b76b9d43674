/**
 * Optional LLM verification of a step: the prompt, a lenient parser for the answer and a
 * timeout race that leaves no timer behind. Any failure means "use the heuristic", never an error.
 */
import { cutText } from '../similarity/text.js'

/** Asks an LLM; resolves with its raw answer text. */
export type LlmVerifyFn = (prompt: string) => Promise<string> | string

export interface StepContext {
  goal: string
  plan_step: string | null
  description: string
  output: string
}

export function buildVerifyPrompt(c: StepContext): string {
  return [
    'You check whether an AI agent step advances its goal.',
    `Goal: ${c.goal}`,
    ...(c.plan_step === null ? [] : [`Current plan step: ${c.plan_step}`]),
    `Step: ${c.description}`,
    `Output: ${cutText(c.output, 1000)}`,
    'Answer with JSON only: {"score": <number from 0 (off-goal) to 1 (clearly advances the goal)>, "reasoning": "<one sentence>"}',
  ].join('\n')
}

function inUnit(v: unknown): number | null {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1 ? n : null
}

const SCORE_KEYS = ['score', 'alignment_score', 'alignment'] as const

/**
 * The LLM's score in [0, 1], or null when the answer says nothing usable. Accepts a JSON object
 * with `score` / `alignment_score` / `alignment` (also inside a code fence or prose), or the
 * first bare number in the text (`0.8`, `Score: .8`, `80%`). Out-of-range numbers are rejected.
 */
export function parseLlmScore(answer: unknown): number | null {
  if (typeof answer === 'number') return inUnit(answer)
  if (typeof answer !== 'string') return null
  const text = answer.trim()
  const json = /\{[\s\S]*\}/.exec(text)
  if (json !== null) {
    try {
      const obj: unknown = JSON.parse(json[0])
      if (typeof obj === 'object' && obj !== null) {
        for (const k of SCORE_KEYS) if (k in obj) return inUnit((obj as Record<string, unknown>)[k])
        return null
      }
    } catch {
      // Not JSON after all: fall through to the bare-number reading.
    }
  }
  const m = /(?<![\w.])(\d+(?:\.\d+)?|\.\d+)\s*(%)?/.exec(text)
  if (m === null) return null
  const v = Number(m[1])
  return inUnit(m[2] === '%' ? v / 100 : v)
}

export type LlmOutcome = { kind: 'score'; score: number } | { kind: 'timeout' } | { kind: 'error'; message: string } | { kind: 'unparsable'; answer: string }

/** Runs `fn(prompt)` against a timeout; the timer is cleared whichever side wins. */
export async function askLlm(fn: LlmVerifyFn, prompt: string, timeoutMs: number): Promise<LlmOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<LlmOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs)
  })
  const answer = Promise.resolve()
    .then(() => fn(prompt))
    .then(
      (raw): LlmOutcome => {
        const score = parseLlmScore(raw)
        return score === null ? { kind: 'unparsable', answer: cutText(String(raw), 200) } : { kind: 'score', score }
      },
      (err: unknown): LlmOutcome => ({ kind: 'error', message: err instanceof Error ? err.message : String(err) }),
    )
  try {
    return await Promise.race([answer, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Why the heuristic was kept, for a verification's `reasoning`. */
export function describeFallback(o: Exclude<LlmOutcome, { kind: 'score' }>, timeoutMs: number): string {
  switch (o.kind) {
    case 'timeout':
      return `LLM verification timed out after ${timeoutMs} ms; heuristic used`
    case 'error':
      return `LLM verification failed (${o.message}); heuristic used`
    case 'unparsable':
      return 'LLM answer had no usable score; heuristic used'
  }
}
