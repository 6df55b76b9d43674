/**
 * OpenAI Agents SDK (`@openai/agents`) adapter: run hooks post each tool call (name, arguments,
 * result) as a step, a `callModelInputFilter` injects the recitation (and the goal reminder after
 * a drifting verdict) before each model call, and guardrails trip on `abort` (and `replan` when
 * asked): a tool input guardrail before the next tool runs, an output guardrail on the final answer.
 *
 *   const gk = goalkeeperAgents({ client, sessionId })
 *   const agent = new Agent({ name, instructions, tools: gk.guardTools([search]), outputGuardrails: [gk.outputGuardrail] })
 *   await gk.attach(new Runner()).run(agent, input, gk.runOptions)
 */
import {
  defineToolInputGuardrail,
  ToolGuardrailFunctionOutputFactory,
  type AgentInputItem,
  type CallModelInputFilter,
  type OutputGuardrail,
  type Runner,
  type Tool,
  type ToolInputGuardrailDefinition,
} from '@openai/agents'
import { applyGuidance, SessionGuard, type SessionGuardOptions } from './session-guard.js'

export { SessionGuard, type SessionGuardOptions } from './session-guard.js'

export interface GoalkeeperAgents {
  /** Verdicts, latest verdict and stop state of the session. */
  readonly guard: SessionGuard
  /** Subscribes the runner's hooks (each tool call becomes a step); returns the runner. */
  attach<R extends Runner>(runner: R): R
  /** Stops posting the runner's tool calls. */
  detach(runner: Runner): void
  callModelInputFilter: CallModelInputFilter
  /** `{ callModelInputFilter }`, to spread into `run(agent, input, options)`. */
  runOptions: { callModelInputFilter: CallModelInputFilter }
  /** Trips (throws ToolInputGuardrailTripwireTriggered) before a tool runs once the verdict says stop. */
  toolGuardrail: ToolInputGuardrailDefinition
  /** Trips (throws OutputGuardrailTripwireTriggered) on a final answer given after a stop verdict. */
  outputGuardrail: OutputGuardrail
  /** The tools with `toolGuardrail` added to each function tool. */
  guardTools<T extends Tool[]>(tools: T): T
}

export function goalkeeperAgents(options: SessionGuardOptions): GoalkeeperAgents {
  const guard = new SessionGuard(options)
  const listeners = new WeakMap<Runner, (...args: unknown[]) => void>()
  const refused = new Set<string>()
  let iteration = 0

  const stopInfo = () => ({ session_id: guard.sessionId, verdict: guard.last?.verification })

  // Hooks are fire-and-forget events: the post runs in the background, in order, and the
  // filter and guardrails below await it before they read the verdict.
  const onToolEnd = (_ctx: unknown, _agent: unknown, tool: { name: string }, result: string, details: { toolCall: { callId?: string; arguments?: string } }) => {
    // A call the guardrail refused did not run: the SDK still reports its end, with the error.
    if (details.toolCall.callId !== undefined && refused.delete(details.toolCall.callId)) return
    void guard.record({ description: `${tool.name}(${details.toolCall.arguments ?? ''})`, output: result, tool: { name: tool.name, args: argsOf(details.toolCall.arguments) } })
  }

  // Counted across every run this adapter joins, as the session's recitation schedule expects.
  const callModelInputFilter: CallModelInputFilter = async ({ modelData }) => {
    iteration++
    const roles = modelData.input.map((item) => ('role' in item && typeof item.role === 'string' ? item.role : 'tool'))
    const guidance = await guard.guidance(iteration, roles)
    const input = applyGuidance<AgentInputItem>(modelData.input, guidance, (content) => ({ type: 'message', role: 'system', content }))
    return input === undefined ? modelData : { ...modelData, input }
  }

  const toolGuardrail = defineToolInputGuardrail({
    name: 'goalkeeper',
    run: async ({ toolCall }) => {
      await guard.settled()
      if (!guard.shouldStop) return ToolGuardrailFunctionOutputFactory.allow()
      refused.add(toolCall.callId)
      return ToolGuardrailFunctionOutputFactory.throwException(stopInfo())
    },
  })

  const outputGuardrail: OutputGuardrail = {
    name: 'goalkeeper',
    execute: async () => {
      await guard.settled()
      return { tripwireTriggered: guard.shouldStop, outputInfo: stopInfo() }
    },
  }

  return {
    guard,
    attach(runner) {
      const listener = onToolEnd as unknown as (...args: unknown[]) => void
      listeners.set(runner, listener)
      runner.on('agent_tool_end', listener as never)
      return runner
    },
    detach(runner) {
      const listener = listeners.get(runner)
      if (listener) runner.off('agent_tool_end', listener as never)
      listeners.delete(runner)
    },
    callModelInputFilter,
    runOptions: { callModelInputFilter },
    toolGuardrail,
    outputGuardrail,
    guardTools(tools) {
      return tools.map((t) => (t.type === 'function' ? { ...t, inputGuardrails: [...(t.inputGuardrails ?? []), toolGuardrail] } : t)) as typeof tools
    },
  }
}

/** A tool call's JSON arguments as the object `tool.args` wants (anything else wrapped). */
function argsOf(json: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json ?? '{}')
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { input: parsed }
  } catch {
    return { input: json }
  }
}
