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

interface LoopOptions<TOOLS extends ToolSet> {
  prepareStep?: PrepareStepFunction<TOOLS>
  onStepFinish?: (step: StepResult<TOOLS>) => Promise<void> | void
  stopWhen?: StopCondition<TOOLS> | StopCondition<TOOLS>[]
}

export interface GoalkeeperAi {
  /** Verdicts, latest verdict and stop state of the session. */
  readonly guard: SessionGuard
  prepareStep: <TOOLS extends ToolSet>(options: Parameters<PrepareStepFunction<TOOLS>>[0]) => Promise<PrepareStepResult<TOOLS>>
  onStepFinish: <TOOLS extends ToolSet>(step: StepResult<TOOLS>) => Promise<void>
  /** True once the latest verdict is one of `stopOn` (after the step's post has settled). */
  stopWhen: <TOOLS extends ToolSet>(options: Parameters<StopCondition<TOOLS>>[0]) => Promise<boolean>
  /**
   * `options` with the three callbacks added, each composed with the caller's own; without a
   * `stopWhen` of the caller's, the loop is also bounded at DEFAULT_MAX_STEPS.
   */
  wrap<TOOLS extends ToolSet, O extends LoopOptions<TOOLS>>(options: O & { tools?: TOOLS }): Omit<O, keyof LoopOptions<TOOLS>> & Required<LoopOptions<TOOLS>>
}

export function goalkeeperAi(options: SessionGuardOptions): GoalkeeperAi {
  const guard = new SessionGuard(options)

  const prepareStep: GoalkeeperAi['prepareStep'] = async ({ stepNumber, messages }) => {
    const guidance = await guard.guidance(stepNumber + 1, messages.map((m) => m.role))
    const out = applyGuidance<ModelMessage>(messages, guidance, (content) => ({ role: 'system', content }))
    return out === undefined ? undefined : { messages: out }
  }

  const onStepFinish: GoalkeeperAi['onStepFinish'] = async (step) => {
    const input = describeStep(step)
    if (input === undefined) return
    void guard.record(input)
    await guard.settled()
  }

  const stopWhen: GoalkeeperAi['stopWhen'] = async () => {
    await guard.settled()
    return guard.shouldStop
  }

  return {
    guard,
    prepareStep,
    onStepFinish,
    stopWhen,
    wrap<TOOLS extends ToolSet, O extends LoopOptions<TOOLS>>(opts: O & { tools?: TOOLS }) {
      const own = opts.prepareStep
      const after = opts.onStepFinish
      const stops: StopCondition<TOOLS>[] = opts.stopWhen === undefined ? [stepCountIs(DEFAULT_MAX_STEPS)] : [opts.stopWhen].flat()
      const wrapped: Required<LoopOptions<TOOLS>> = {
        ...opts,
        prepareStep: async (args) => {
          const theirs = await own?.(args)
          const ours = await prepareStep<TOOLS>({ ...args, messages: theirs?.messages ?? args.messages })
          return theirs || ours ? { ...theirs, ...ours } : undefined
        },
        onStepFinish: async (step) => {
          await onStepFinish(step)
          await after?.(step)
        },
        stopWhen: [stopWhen, ...stops],
      }
      return { ...opts, ...wrapped }
    },
  }
}

/** A finished step as goalkeeper sees it: what the model said and called, and what came back. */
export function describeStep<TOOLS extends ToolSet>(step: Pick<StepResult<TOOLS>, 'text' | 'toolCalls' | 'toolResults'>): StepInput | undefined {
  const calls = step.toolCalls.map((c) => `${c.toolName}(${compact(c.input)})`)
  const description = [step.text.trim(), ...calls].filter(Boolean).join('\n')
  if (description === '') return undefined
  const results = step.toolResults.map((r) => `${r.toolName}: ${typeof r.output === 'string' ? r.output : compact(r.output)}`)
  return results.length === 0 ? { description } : { description, output: results.join('\n') }
}

function compact(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '')
}
