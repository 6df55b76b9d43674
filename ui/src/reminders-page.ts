import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { relative, when } from './format.js'
import { useLoad } from './hooks.js'
import type { Page, Reminder, SnoozedReminder, Trigger } from './types.js'

const STATUSES = ['pending', 'triggered', 'snoozed', 'completed', 'dismissed']
const PRIORITIES = ['urgent', 'normal', 'low']
const TRIGGERS = ['scheduled', 'recurring', 'context']
/** Snooze choices in minutes; the server clamps them to the priority's bounds (and says so). */
const SNOOZES = [15, 60, 240, 1440]

const describe = (t: Trigger): string => (t.type === 'scheduled' ? `at ${when(t.at)}` : t.type === 'recurring' ? `cron ${t.cron}${t.timezone ? ` (${t.timezone})` : ''}` : `context /${t.pattern}/`)

/** Reminders with filters and full-text search; complete, snooze and dismiss in place. */
export function RemindersPage() {
  const [filters, setFilters] = useState({ status: '', priority: '', trigger_type: '', tag: '' })
  const [q, setQ] = useState('')
  const [search, setSearch] = useState('')
  const [extra, setExtra] = useState<{ items: Reminder[]; cursor: string | null }>({ items: [], cursor: null })
  // Rows changed by a button, shown as the server returned them.
  const [changed, setChanged] = useState<Record<string, Reminder>>({})
  const [note, setNote] = useState<string | undefined>(undefined)

  const { data, error } = useLoad(async () => {
    setExtra({ items: [], cursor: null })
    setChanged({})
    if (search) {
      const r = await api<{ items: { reminder: Reminder; score: number }[] }>(`/reminders/search?${new URLSearchParams({ q: search, limit: '50' })}`)
      return { items: r.items.map((i) => i.reminder), next_cursor: null }
    }
    const query = new URLSearchParams({ limit: '50' })
    for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v)
    return api<Page<Reminder>>(`/reminders?${query}`)
  }, [JSON.stringify(filters), search])

  const more = async () => {
    const cursor = extra.cursor ?? data?.next_cursor
    if (!cursor) return
    const query = new URLSearchParams({ limit: '50', cursor })
    for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v)
    const page = await api<Page<Reminder>>(`/reminders?${query}`)
    setExtra({ items: [...extra.items, ...page.items], cursor: page.next_cursor })
  }
  const act = async (r: Reminder, action: string, body?: unknown) => {
    try {
      const updated = await api<SnoozedReminder>(`/reminders/${r.id}/${action}`, { method: 'POST', body })
      setChanged({ ...changed, [r.id]: updated })
      setNote(updated.clamped ? `“${r.title}”: the snooze was clamped to the ${r.priority} priority's bounds.` : undefined)
    } catch (err) {
      setNote(`“${r.title}”: ${(err as Error).message}`)
    }
  }
  const set = (key: keyof typeof filters) => (e: Event) => setFilters({ ...filters, [key]: (e.target as HTMLInputElement).value })
  const rows = data === undefined ? [] : [...data.items, ...extra.items].map((r) => changed[r.id] ?? r)
  const hasMore = search === '' && (extra.cursor ?? data?.next_cursor ?? null) !== null

  return html` <section>
    <header class="page-head"><h1>Reminders</h1></header>
    <form
      class="filters"
      onSubmit=${(e: Event) => {
        e.preventDefault()
        setSearch(q.trim())
      }}
    >
      <input type="search" name="q" placeholder="Search title, body, tags…" value=${q} onInput=${(e: Event) => setQ((e.target as HTMLInputElement).value)} />
      <button type="submit">Search</button>
      ${
        search &&
        html`<button
          type="button"
          onClick=${() => {
            setQ('')
            setSearch('')
          }}
        >
          Clear search
        </button>`
      }
      <label
        >Status
        <select name="status" value=${filters.status} onChange=${set('status')} disabled=${!!search}>
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option>${s}</option>`)}
        </select></label
      >
      <label
        >Priority
        <select name="priority" value=${filters.priority} onChange=${set('priority')} disabled=${!!search}>
          <option value="">any</option>
          ${PRIORITIES.map((s) => html`<option>${s}</option>`)}
        </select></label
      >
      <label
        >Trigger
        <select name="trigger_type" value=${filters.trigger_type} onChange=${set('trigger_type')} disabled=${!!search}>
          <option value="">any</option>
          ${TRIGGERS.map((s) => html`<option>${s}</option>`)}
        </select></label
      >
      <label>Tag <input name="tag" value=${filters.tag} onChange=${set('tag')} disabled=${!!search} size="10" /></label>
    </form>
    ${search && html`<p class="muted">Best matches for “${search}”.</p>`} ${error && html`<p class="error" role="alert">${error}</p>`} ${note && html`<p class="note" role="status">${note}</p>`}
    ${
      data === undefined
        ? error
          ? null
          : html`<p class="muted">Loading…</p>`
        : rows.length === 0
          ? html`<p class="muted">No reminders.</p>`
          : html` <table class="list reminders">
              <thead>
                <tr>
                  <th>Reminder</th>
                  <th>Status</th>
                  <th>Priority</th>
                  <th>Trigger</th>
                  <th>Next fire</th>
                  <th>Tags</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${rows.map((r) => html`<${Row} key=${r.id} r=${r} act=${act} />`)}
              </tbody>
            </table>`
    }
    ${hasMore && html`<nav class="pager"><button onClick=${more}>More</button></nav>`}
  </section>`
}

function Row({ r, act }: { r: Reminder; act: (r: Reminder, action: string, body?: unknown) => void }) {
  const [minutes, setMinutes] = useState(60)
  const closed = r.status === 'completed' || r.status === 'dismissed'
  return html` <tr data-reminder=${r.id}>
    <td>
      <strong>${r.title}</strong>${r.body && html`<div class="small">${r.body}</div>`}
      <div class="id">${r.id}</div>
    </td>
    <td>
      <span class=${`badge rstatus-${r.status}`} data-status=${r.status}>${r.status}</span
      >${r.snooze_until && r.status === 'snoozed' ? html`<div class="small">until ${when(r.snooze_until)}</div>` : null}
    </td>
    <td><span class=${`badge priority-${r.priority}`}>${r.priority}</span></td>
    <td class="small">${describe(r.trigger)}</td>
    <td>
      ${
        r.next_fire_at
          ? html`${when(r.next_fire_at)}
              <div class="muted small">${relative(r.next_fire_at)}</div>`
          : html`<span class="muted">—</span>`
      }
    </td>
    <td class="small">${r.context_tags.join(', ')}</td>
    <td class="actions">
      <button disabled=${closed} onClick=${() => act(r, 'complete')}>Complete</button>
      <span class="snooze">
        <select aria-label="Snooze for" value=${minutes} onChange=${(e: Event) => setMinutes(Number((e.target as HTMLSelectElement).value))} disabled=${closed}>
          ${SNOOZES.map((m) => html`<option value=${m}>${m < 60 ? `${m} min` : `${m / 60} h`}</option>`)}
        </select>
        <button disabled=${closed} onClick=${() => act(r, 'snooze', { minutes })}>Snooze</button>
      </span>
      <button disabled=${closed} onClick=${() => act(r, 'dismiss')}>Dismiss</button>
    </td>
  </tr>`
}
