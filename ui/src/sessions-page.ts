import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { pct, relative, truncate, when } from './format.js'
import { useLoad } from './hooks.js'
import { Sparkline } from './sparkline.js'
import type { Page, Session, SessionDigest } from './types.js'

const PAGE_SIZE = 20

/** " · claude-code 2f6c…": where a session opened by a coding agent's hooks came from, and its id there. */
export function external(session: Session): string {
  if (session.external_id === null) return ''
  const source = typeof session.metadata.source === 'string' ? `${session.metadata.source} ` : ''
  return ` · ${source}${session.external_id}`
}

/** The agent's sessions, newest first (GET /v1/sessions/overview), paged by cursor. */
export function SessionsPage() {
  const [status, setStatus] = useState('')
  // The cursors of the pages before this one: Back pops, Next pushes.
  const [cursors, setCursors] = useState<string[]>([])
  const cursor = cursors[cursors.length - 1]
  const { data, error } = useLoad(() => {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) })
    if (status) q.set('status', status)
    if (cursor) q.set('cursor', cursor)
    return api<Page<SessionDigest>>(`/sessions/overview?${q}`)
  }, [status, cursor])

  return html` <section>
    <header class="page-head">
      <h1>Sessions</h1>
      <label
        >Status
        <select
          value=${status}
          onChange=${(e: Event) => {
            setStatus((e.target as HTMLSelectElement).value)
            setCursors([])
          }}
        >
          <option value="">all</option>
          <option value="active">active</option>
          <option value="archived">archived</option>
        </select>
      </label>
    </header>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      data === undefined
        ? error
          ? null
          : html`<p class="muted">Loading…</p>`
        : data.items.length === 0
          ? html`<p class="muted">No sessions yet.</p>`
          : html` <table class="list sessions">
              <thead>
                <tr>
                  <th>Goal</th>
                  <th>Status</th>
                  <th>Steps</th>
                  <th>Last action</th>
                  <th>Similarity</th>
                  <th>Progress</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                ${data.items.map(
                  (d) =>
                    html` <tr key=${d.session.id} data-session=${d.session.id}>
                      <td>
                        <a href=${`/ui/sessions/${d.session.id}`}>${truncate(d.session.goal, 90)}</a>
                        <div class="id">${d.session.id}${external(d.session)}</div>
                      </td>
                      <td><span class=${`badge status-${d.session.status}`}>${d.session.status}</span></td>
                      <td class="num">${d.step_count}${d.last_step_at && html`<div class="muted small">${relative(d.last_step_at)}</div>`}</td>
                      <td>${d.last_action ? html`<span class=${`badge action-${d.last_action}`}>${d.last_action}</span>` : html`<span class="muted">—</span>`}</td>
                      <td><${Sparkline} values=${d.recent_similarity} threshold=${d.session.config.drift_threshold} /></td>
                      <td><progress max="1" value=${d.session.state.progress}></progress> ${pct(d.session.state.progress)}</td>
                      <td>${when(d.session.created_at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
    }
    <nav class="pager">
      <button disabled=${cursors.length === 0} onClick=${() => setCursors(cursors.slice(0, -1))}>← Newer</button>
      <button disabled=${!data?.next_cursor} onClick=${() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}>Older →</button>
    </nav>
  </section>`
}
