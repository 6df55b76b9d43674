import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { relative, when } from './format.js'
import { useInterval, useLoad } from './hooks.js'
import type { Attempt, Page, Webhook } from './types.js'

const REFRESH_MS = 4000

/** Webhook endpoints, why a disabled one is disabled, and each endpoint's recent deliveries. */
export function WebhooksPage() {
  const { data, error } = useLoad(() => api<Page<Webhook>>('/webhooks?limit=200'), [])
  return html` <section>
    <header class="page-head"><h1>Webhooks</h1></header>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${data === undefined ? (error ? null : html`<p class="muted">Loading…</p>`) : data.items.length === 0 ? html`<p class="muted">No webhook endpoints.</p>` : data.items.map((w) => html`<${Endpoint} key=${w.id} w=${w} />`)}
  </section>`
}

interface Message {
  message_id: string
  event_type: string
  attempts: Attempt[]
}

/** The attempts log (newest first) grouped by message: one delivery and every attempt at it. */
function byMessage(attempts: Attempt[]): Message[] {
  const messages = new Map<string, Message>()
  for (const a of attempts) {
    let m = messages.get(a.message_id)
    if (m === undefined) messages.set(a.message_id, (m = { message_id: a.message_id, event_type: a.event_type, attempts: [] }))
    m.attempts.push(a)
  }
  for (const m of messages.values()) m.attempts.sort((x, y) => x.attempt - y.attempt)
  return [...messages.values()]
}

const ok = (a: Attempt) => a.status_code !== null && a.status_code >= 200 && a.status_code < 300

function Endpoint({ w }: { w: Webhook }) {
  const { data, error, reload } = useLoad(() => api<Page<Attempt>>(`/webhooks/${w.id}/deliveries?limit=100`), [w.id])
  const [note, setNote] = useState<string | undefined>(undefined)
  // Retries land on their own schedule: the log is read again every few seconds.
  useInterval(reload, REFRESH_MS)
  const redeliver = async (messageId: string) => {
    try {
      await api(`/webhooks/${w.id}/deliveries/${messageId}/retry`, { method: 'POST' })
      setNote(`Redelivery of ${messageId} queued.`)
    } catch (err) {
      setNote((err as Error).message)
    }
  }
  const messages = data === undefined ? [] : byMessage(data.items)
  return html` <article class="endpoint" data-webhook=${w.id}>
    <header>
      <h2><code>${w.url}</code></h2>
      <span class=${`badge wstatus-${w.status}`}>${w.status}</span>
    </header>
    <p class="small">${w.id}${w.description ? ` · ${w.description}` : ''} · events: ${w.event_types.length === 0 ? 'all' : w.event_types.join(', ')}</p>
    ${w.status === 'disabled' && html`<p class="warn">Disabled${w.disabled_reason ? `: ${w.disabled_reason}` : ''}</p>`}
    ${w.failing_since && html`<p class="warn small">Failing since ${when(w.failing_since)}.</p>`} ${note && html`<p class="note" role="status">${note}</p>`}
    ${error && html`<p class="error">${error}</p>`}
    ${
      data !== undefined &&
      (messages.length === 0
        ? html`<p class="muted small">No deliveries yet.</p>`
        : html` <table class="list deliveries">
            <thead>
              <tr>
                <th>Event</th>
                <th>Message</th>
                <th>Attempts (status, latency)</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${messages.map(
                (m) =>
                  html` <tr key=${m.message_id} data-message=${m.message_id}>
                    <td>${m.event_type}</td>
                    <td class="id">${m.message_id}</td>
                    <td>
                      <ol class="attempts">
                        ${m.attempts.map(
                          (a) =>
                            html` <li key=${a.id} class=${ok(a) ? 'ok' : 'fail'}>
                              #${a.attempt} ${a.status_code ?? 'no response'} · ${a.duration_ms} ms · ${when(a.created_at)} ${a.error && html` · <span class="small">${a.error}</span>`}
                              ${a.next_attempt_at && html` · <span class="small">next ${relative(a.next_attempt_at)}</span>`}
                            </li>`,
                        )}
                      </ol>
                    </td>
                    <td><button onClick=${() => redeliver(m.message_id)}>Redeliver</button></td>
                  </tr>`,
              )}
            </tbody>
          </table>`)
    }
  </article>`
}
