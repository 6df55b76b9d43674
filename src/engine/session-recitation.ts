/**
 * The recitation side of a goal session: merging the agent's context, the plan as tasks and the
 * RecitationState a block is built from. Plain functions over the session's parts, so GoalSession
 * keeps only the calls into its RecitationManager.
 */
import type { GoalTracker } from './goal-tracker.js'
import type { PlanTask, RecitationState } from './recitation.js'
import type { RecitationContext } from './session-types.js'
import { defined } from './defined.js'

/** `context` with the fields `update` gives replaced; the others are kept. */
export function mergeContext(context: RecitationContext, update: RecitationContext): RecitationContext {
  return { ...context, ...defined(update) }
}

/** The state a recitation block at `iteration` is built from; plan tasks default to the tracker's plan. */
export function recitationStateOf(
  goal: string,
  context: RecitationContext,
  tracker: GoalTracker,
  iteration: number,
  context_tokens?: number,
): RecitationState {
  return {
    iteration,
    goal,
    plan_tasks: context.plan_tasks ?? planTasks(tracker),
    ...defined({
      todos: context.todos,
      memories: context.memories,
      active_files: context.active_files,
      recent_errors: context.recent_errors,
      context_tokens,
    }),
  }
}

/** The plan as tasks when the agent has not sent its own: done before the current step, in progress at it. */
function planTasks(tracker: GoalTracker): PlanTask[] {
  const current = tracker.getState().current_step
  return tracker.getPlan().map((description, i) => ({
    description,
    status: i < current ? 'completed' : i === current ? 'in_progress' : 'pending',
  }))
}
