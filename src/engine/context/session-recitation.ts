/**
 * The recitation side of a goal session: merging the agent's context, the plan as tasks, the
 * RecitationState a block is built from and what an injection would do now. Plain functions over
 * the session's parts, so GoalSession keeps only the calls into its RecitationManager.
 */
import type { GoalTracker } from '../session/goal-tracker.js'
import { calculateOptimalFrequency, type PlanTask, type RecitationManager, type RecitationState } from './recitation.js'
import type { SessionConfig } from '../session/session-config.js'
import type { SessionDetection } from '../detection/session-detection.js'
import type { RecitationContext, RecitationPreview } from '../session/session-types.js'
import { defined } from '../defined.js'

/** `context` with the fields `update` gives replaced; the others are kept. */
export function mergeContext(context: RecitationContext, update: RecitationContext): RecitationContext {
  return { ...context, ...defined(update) }
}

/** The state a recitation block at `iteration` is built from; plan tasks default to the tracker's plan. */
export function recitationStateOf(goal: string, context: RecitationContext, tracker: GoalTracker, iteration: number, contextTokens?: number): RecitationState {
  return {
    iteration,
    goal,
    plan_tasks: context.plan_tasks ?? planTasks(tracker),
    ...defined({
      todos: context.todos,
      memories: context.memories,
      active_files: context.active_files,
      recent_errors: context.recent_errors,
      context_tokens: contextTokens,
    }),
  }
}

/** The plan as tasks when the agent has not sent its own: done before the current step, in progress at it. */
export function planTasks(tracker: GoalTracker): PlanTask[] {
  const current = tracker.getState().current_step
  return tracker.getPlan().map((description, i) => ({
    description,
    status: i < current ? 'completed' : i === current ? 'in_progress' : 'pending',
  }))
}

/**
 * What an injection of `state` would do, recording nothing: due every `frequency` iterations (the
 * manager's adaptive one unless configured or derived from `context_tokens`), and held back with
 * the reason when skip_unchanged finds it identical to the last block injected.
 */
export function recitationPreview(cfg: SessionConfig['recitation'], manager: RecitationManager, detection: SessionDetection, state: RecitationState): RecitationPreview {
  const frequency = cfg.frequency !== 'adaptive' ? cfg.frequency : state.context_tokens !== undefined ? calculateOptimalFrequency(state.context_tokens) : manager.toJSON().adaptive_frequency
  const should_inject = state.iteration === 1 || state.iteration - manager.lastInjectionIteration >= frequency
  const block = manager.buildBlock(state)
  const preview: RecitationPreview = {
    should_inject,
    frequency,
    content: block?.content ?? null,
    text: block?.text ?? null,
    token_estimate: block?.token_estimate ?? 0,
  }
  const skipped = should_inject && block !== null ? detection.skip('recitation', block.content, state.iteration) : null
  return skipped === null ? preview : { ...preview, should_inject: false, skipped }
}
