import { external } from './sessions-page.js'
import { html } from 'htm/preact'
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { allPages, api } from './api.js'
import { num, pct, when } from './format.js'
import { useInterval } from './hooks.js'
import { stepMarkers } from './markers.js'
import { SimilarityChart } from './similarity-chart.js'
import { StepsTable } from './steps-table.js'
import type { NextTurn, Session, Step } from './types.js'

/** How often an active session is read again (new steps only: the step log is paged by step number). */
const POLL_MS = 3000

interface View {
  session: Session
  steps: Step[]
  next: NextTurn
}

/** One session: the similarity chart, plan progress, the step log and what the next turn injects. */
export function SessionPage({ id }: { id: string }) {
  const [view, setView] = useState<View | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  // A poll is skipped while a read is in flight; `generation` drops answers for a session left behind.
  const busy = useRef(false)
  const generation = useRef(0)

  const refresh = useCallback(
    async (previous: View | undefined) => {
      const mine = generation.current
      busy.current = true
      try {
        const after = previous?.steps.at(-1)?.step_number
        const [session, fresh, next] = await Promise.all([
          api<Session>(`/sessions/${id}`),
          allPages<Step>(`/sessions/${id}/steps`, after === undefined ? undefined : String(after)),
          api<NextTurn>(`/sessions/${id}/next-turn`),
        ])
        if (mine !== generation.current) return
        if (previous === undefined) performance.mark('gk:session-loaded', { detail: { steps: fresh.items.length } })
        const steps = previous === undefined ? fresh.items : fresh.items.length === 0 ? previous.steps : [...previous.steps, ...fresh.items]
        setView({ session, steps, next })
        setError(undefined)
      } catch (err) {
        if (mine === generation.current) setError((err as Error).message)
      } finally {
        if (mine === generation.current) busy.current = false
      }
    },
    [id],
  )

  useEffect(() => {
    generation.current++
    setView(undefined)
    void refresh(undefined)
  }, [id])
  const viewRef = useRef(view)
  viewRef.current = view
  const poll = useCallback(() => {
    if (!busy.current) void refresh(viewRef.current)
  }, [refresh])
  useInterval(poll, POLL_MS, view?.session.status === 'active')

  const markers = useMemo(() => stepMarkers(view?.steps ?? []), [view?.steps])
  // The table comes a task after the first render: the chart (drawn in an effect) goes first.
  const [tableReady, setTableReady] = useState(false)
  const loaded = view !== undefined
  useEffect(() => {
    if (!loaded) return
    const t = setTimeout(() => setTableReady(true), 0)
    return () => clearTimeout(t)
  }, [loaded])
  if (view === undefined) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="muted">Loading…</p>`
  const { session, steps, next } = view
  const s = session.state
  return html` <section class="session">
    <p><a href="/ui/sessions">← Sessions</a></p>
    <header class="page-head">
      <h1 class="goal">${session.goal}</h1>
      <span class=${`badge status-${session.status}`}>${session.status}</span>
    </header>
    <p class="muted small">
      ${session.id}${external(session)} · created ${when(session.created_at)} · updated ${when(session.updated_at)} ${session.status === 'active' ? html` · refreshes every ${POLL_MS / 1000} s` : null}
    </p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <dl class="stats">
      <div>
        <dt>Steps</dt>
        <dd data-stat="steps">${steps.length}</dd>
      </div>
      <div>
        <dt>Progress</dt>
        <dd>${pct(s.progress)}</dd>
      </div>
      <div>
        <dt>Drift score</dt>
        <dd>${num(s.drift_score)}</dd>
      </div>
      <div>
        <dt>Loops</dt>
        <dd>${s.loop_count}${s.loop_detected ? ' (looping)' : ''}</dd>
      </div>
      <div>
        <dt>Stall turns</dt>
        <dd>${s.stall_turns}</dd>
      </div>
      <div>
        <dt>Threshold</dt>
        <dd>${session.config.drift_threshold} (${session.config.similarity})</dd>
      </div>
    </dl>

    <h2>Similarity per step</h2>
    ${
      steps.length === 0
        ? html`<p class="muted">No steps yet.</p>`
        : html` <${SimilarityChart} steps=${steps} threshold=${session.config.drift_threshold} markers=${markers} />
            <${Legend} />
            ${
              markers.some((m) => m.kind !== 'replan' && m.kind !== 'abort') &&
              html` <ul class="marker-list">
                ${markers.filter((m) => m.kind !== 'replan' && m.kind !== 'abort').map((m) => html`<li key=${`${m.kind}-${m.step}`} class=${`marker-item marker-item-${m.kind}`}><a href=${`#step-${m.step}`}>${m.label}</a></li>`)}
              </ul>`
            }`
    }

    <h2>Plan</h2>
    ${
      session.plan.length === 0
        ? html`<p class="muted">No plan.</p>`
        : html` <p><progress max="1" value=${s.progress}></progress> ${s.current_step} of ${s.total_steps_planned} plan steps done</p>
            <ol class="plan">
              ${session.plan.map((p, i) => html`<li key=${i} class=${i < s.current_step ? 'done' : i === s.current_step ? 'current' : 'pending'}>${p}</li>`)}
            </ol>`
    }

    <h2>
      Next turn <span class="muted small">(iteration ${next.iteration}, as <code>POST /v1/turns</code> would build it before the token budget)</span>
    </h2>
    <div class="next-turn">
      <div>
        <h3>Goal reminder <span class="muted small">${next.reminder.mode}, ~${next.reminder.token_estimate} tokens${next.reminder.includes_drift_warning ? ', with drift warning' : ''}</span></h3>
        ${next.reminder.text ? html`<pre class="reminder-text">${next.reminder.text}</pre>` : html`<p class="muted">None this turn.</p>`}
      </div>
      <div>
        <h3>Recitation <span class="muted small">${next.recitation.should_inject ? 'due' : 'not due'} (every ${next.recitation.frequency}), ~${next.recitation.token_estimate} tokens</span></h3>
        ${next.recitation.text ? html`<pre class="recitation-text">${next.recitation.text}</pre>` : html`<p class="muted">Nothing to recite.</p>`}
      </div>
    </div>

    <h2>Steps</h2>
    ${tableReady ? html`<${StepsTable} steps=${steps} />` : html`<p class="muted">Loading steps…</p>`}
  </section>`
}

function Legend() {
  return html`<p class="legend small">
    <span class="dot sev-none"></span>none <span class="dot sev-low"></span>low <span class="dot sev-moderate"></span>moderate <span class="dot sev-high"></span>high
    <span class="dot sev-critical"></span>critical · <span class="key key-loop">L</span> loop <span class="key key-stall">S</span> stall <span class="key key-drift">D</span> sustained drift
    <span class="key key-replan"></span> replan <span class="key key-abort"></span> abort · dashed: drift threshold
  </p>`
}
