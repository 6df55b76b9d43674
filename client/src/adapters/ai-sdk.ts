/**
 * Vercel AI SDK (`ai` 6) adapter: `prepareStep` puts the goal reminder and the recitation into the
 * messages before each model call, `onStepFinish` posts the step (its text, tool calls and their
 * results) and keeps the verdict, `stopWhen` ends the loop on `abort` (and `replan` when asked).
 *
 *   const gk = goalkeeperAi({ client, sessionId })
 *   await generateText(gk.wrap({ model, tools, prompt }))
 */
import { stepCountIs, type ModelMessage, type PrepareStepFunction, type PrepareStepResult, type StepResult, type StopCondition, type ToolSet } from 'ai'
import { applyGuidance, SessionGuard, type SessionGuardOptions } from './session-guard.js'
import type { StepInput } from '../types.js'

export { SessionGuard, type SessionGuardOptions } from './session-guard.js'

/** The loop bound `wrap` adds when the caller gave no `stopWhen` (the SDK's own default is 1 step). */
export const DEFAULT_MAX_STEPS = 20

/** The loop callbacks of generateText / streamText options, over any tool set. */
export interface LoopOptions {
  prepareStep?: PrepareStepFunction<ToolSet>
  onStepFinish?: (step: StepResult<ToolSet>) => Promise<void> | void
  stopWhen?: StopCondition<ToolSet> | StopCondition<ToolSet>[]
}

/** Goalkeeper's callbacks: generic, so they fit the options of any tool set. */
export interface GuardedLoop {
  prepareStep: <TOOLS extends ToolSet>(options: Parameters<PrepareStepFunction<TOOLS>>[0]) => Promise<PrepareStepResult<TOOLS>>
  onStepFinish: <TOOLS extends ToolSet>(step: StepResult<TOOLS>) => Promise<void>
  /** True once the latest verdict is one of `stopOn` (after the step's post has settled). */
  stopWhen: <TOOLS extends ToolSet>(options: Parameters<StopCondition<TOOLS>>[0]) => Promise<boolean>
}

export interface GoalkeeperAi extends GuardedLoop {
  /** Verdicts, latest verdict and stop state of the session. */
  readonly guard: SessionGuard
  /**
   * `options` with the three callbacks added, each composed with the caller's own (theirs run
   * first in prepareStep, after ours in onStepFinish; any stop condition stops). Without a
   * `stopWhen` of the caller's, the loop is also bounded at DEFAULT_MAX_STEPS.
   */
  wrap<O extends object>(options: O & LoopOptions): Omit<O, keyof LoopOptions> & Omit<GuardedLoop, 'stopWhen'> & { stopWhen: GuardedLoop['stopWhen'][] }
}

export function goalkeeperAi(options: SessionGuardOptions): GoalkeeperAi {
  const guard = new SessionGuard(options)

  // Counted across every loop this adapter runs, as the session's recitation schedule expects.
  let iteration = 0

  const prepareStep: GuardedLoop['prepareStep'] = async ({ messages }) => {
    const guidance = await guard.guidance(
      ++iteration,
      messages.map((m) => m.role),
    )
    const out = applyGuidance<ModelMessage>(messages, guidance, (content) => ({ role: 'system', content }))
    return out === undefined ? undefined : { messages: out }
  }

  const onStepFinish: GuardedLoop['onStepFinish'] = async (step) => {
    const input = describeStep(step)
    if (input === undefined) return
    void guard.record(input)
    await guard.settled()
  }

  const stopWhen: GuardedLoop['stopWhen'] = async () => {
    await guard.settled()
    return guard.shouldStop
  }

  return {
    guard,
    prepareStep,
    onStepFinish,
    stopWhen,
    wrap(opts) {
      const { prepareStep: own, onStepFinish: after, stopWhen: theirStops, ...rest } = opts
      // The caller's callbacks were typed for ToolSet; at run time they get the same objects.
      const stops = (theirStops === undefined ? [stepCountIs(DEFAULT_MAX_STEPS)] : [theirStops].flat()) as unknown as GuardedLoop['stopWhen'][]
      const wrapped: Omit<GuardedLoop, 'stopWhen'> & { stopWhen: GuardedLoop['stopWhen'][] } = {
        prepareStep: async (args) => {
          const theirs = (await own?.(args as never)) as PrepareStepResult<never> | undefined
          const ours = await prepareStep({ ...args, messages: theirs?.messages ?? args.messages } as never)
          return (theirs || ours ? { ...theirs, ...ours } : undefined) as never
        },
        onStepFinish: async (step) => {
          await onStepFinish(step)
          await after?.(step as never)
        },
        stopWhen: [stopWhen, ...stops],
      }
      return { ...rest, ...wrapped }
    },
  }
}

/**
 * A finished step as goalkeeper sees it: what the model said and called, and what came back; its
 * first tool call as `tool` (for the loop kinds that compare calls), `error` when a call failed,
 * and the step's tokens (for budgets).
 */
export function describeStep<TOOLS extends ToolSet>(
  step: Pick<StepResult<TOOLS>, 'text' | 'toolCalls' | 'toolResults' | 'content'> & { usage?: Pick<StepResult<TOOLS>['usage'], 'totalTokens'> },
): StepInput | undefined {
  const calls = step.toolCalls.map((c) => `${c.toolName}(${compact(c.input)})`)
  const description = [step.text.trim(), ...calls].filter(Boolean).join('\n')
  if (description === '') return undefined
  const errors = step.content.filter((p) => p.type === 'tool-error')
  const results = [
    ...step.toolResults.map((r) => `${r.toolName}: ${typeof r.output === 'string' ? r.output : compact(r.output)}`),
    ...errors.map((e) => `${e.toolName} failed: ${e.error instanceof Error ? e.error.message : compact(e.error)}`),
  ]
  const input: StepInput = { description }
  if (results.length > 0) input.output = results.join('\n')
  const first = step.toolCalls[0]
  if (first !== undefined) input.tool = { name: first.toolName, args: isObject(first.input) ? first.input : { input: first.input } }
  if (first !== undefined) input.error = errors.length > 0
  const tokens = step.usage?.totalTokens
  if (tokens !== undefined && Number.isInteger(tokens) && tokens >= 0) input.tokens = tokens
  return input
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function compact(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '')
}
