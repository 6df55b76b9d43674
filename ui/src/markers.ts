/**
 * Where the session chart puts its markers, from the step log alone (a step's row carries its
 * verification and drift check, not the state after it). Mirrors the engine (src/engine/session/goal-tracker.ts,
 * session-events.ts); test/ui/markers.test.ts checks it against real step results.
 * - loop: the step completed a loop (`verification.loop`, any kind) where the step before was not in
 *   one of that kind; steps logged before loop kinds existed carry the tracker's note instead;
 * - stall: the run of steps that did not advance reaches STALL_TURNS (a step advances when it is
 *   aligned and not a repeat, whose reasoning says so);
 * - drift: sustained drift begins (drifting after a step that was not);
 * - replan / abort: the recommended action.
 */
type MarkerKind = 'loop' | 'stall' | 'drift' | 'replan' | 'abort'

export interface Marker {
  kind: MarkerKind
  step: number
  label: string
}

export interface MarkerStep {
  step_number: number
  verification: { aligned: boolean; reasoning: string; recommended_action: string; loop?: { kind: string } }
  drift: { drifting: boolean }
}

/** PROGRESS_STALL_TURNS of src/engine/drift/step-alignment.ts. */
const STALL_TURNS = 5
const LOOP_NOTE = 'loop: the same step state seen'
const REPEAT_NOTE = 'repeated step: no progress'

export function stepMarkers(steps: readonly MarkerStep[]): Marker[] {
  const markers: Marker[] = []
  let stall = 0
  let drifting = false
  let loopKind: string | undefined
  for (const s of steps) {
    const { reasoning, aligned, recommended_action: action, loop } = s.verification
    if (loop !== undefined ? loop.kind !== loopKind : reasoning.includes(LOOP_NOTE)) {
      const kind = loop === undefined ? '' : ` (${loop.kind.replace('_', ' ')})`
      markers.push({ kind: 'loop', step: s.step_number, label: `Loop${kind} detected at step ${s.step_number}` })
    }
    loopKind = loop?.kind
    const advanced = aligned && !reasoning.includes(REPEAT_NOTE)
    const before = stall
    stall = advanced ? 0 : stall + 1
    if (stall === STALL_TURNS && before < STALL_TURNS) markers.push({ kind: 'stall', step: s.step_number, label: `Stalled: ${STALL_TURNS} steps without progress at step ${s.step_number}` })
    if (s.drift.drifting && !drifting) markers.push({ kind: 'drift', step: s.step_number, label: `Sustained drift began at step ${s.step_number}` })
    drifting = s.drift.drifting
    if (action === 'replan' || action === 'abort') markers.push({ kind: action, step: s.step_number, label: `Step ${s.step_number}: ${action}` })
  }
  return markers
}

/** The stall count after each step, as the tracker keeps it (for tests and the steps table). */
export function stallCounts(steps: readonly MarkerStep[]): number[] {
  let stall = 0
  return steps.map((s) => (stall = s.verification.aligned && !s.verification.reasoning.includes(REPEAT_NOTE) ? 0 : stall + 1))
}
