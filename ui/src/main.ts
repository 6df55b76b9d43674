import { render } from 'preact'
import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import './style.css'
import { api, ApiError, apiKey, forgetKey, saveKey, whenUnauthorized } from './api.js'
import { RemindersPage } from './reminders-page.js'
import { navigate, useLocation } from './router.js'
import { SessionPage } from './session-page.js'
import { SessionsPage } from './sessions-page.js'
import { WebhooksPage } from './webhooks-page.js'

performance.mark('gk:boot')

/** Checks a key with a cheap agent call; the server's own words when it is refused. */
async function check(key: string): Promise<string | undefined> {
  try {
    await api('/settings', { key })
    return undefined
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return `That API key was not accepted (401): ${err.message}`
    if (err instanceof ApiError && err.status === 403) return `That key cannot be used here (403): ${err.message}`
    return (err as Error).message
  }
}

function SignIn({ message, onSignedIn }: { message: string | undefined; onSignedIn: () => void }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState(message)
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    const problem = await check(key.trim())
    setBusy(false)
    if (problem !== undefined) return setError(problem)
    saveKey(key.trim())
    onSignedIn()
  }
  return html` <main class="sign-in">
    <h1>goalkeeper</h1>
    <form onSubmit=${submit}>
      <label for="api-key">Agent API key</label>
      <input id="api-key" name="api_key" type="password" autocomplete="off" required value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <p class="muted small">The key stays in this tab (sessionStorage) and is sent only to this server's /v1 API.</p>
    </form>
  </main>`
}

function Page({ path }: { path: string }) {
  const session = /^\/ui\/sessions\/([^/]+)$/.exec(path)
  if (session) return html`<${SessionPage} id=${decodeURIComponent(session[1]!)} />`
  if (path === '/ui/reminders') return html`<${RemindersPage} />`
  if (path === '/ui/webhooks') return html`<${WebhooksPage} />`
  return html`<${SessionsPage} />`
}

function App() {
  const { path } = useLocation()
  const [signedIn, setSignedIn] = useState(apiKey() !== null)
  const [message, setMessage] = useState<string | undefined>(undefined)
  useEffect(
    () =>
      whenUnauthorized((m) => {
        forgetKey()
        setMessage(`Signed out: the server refused the key (${m})`)
        setSignedIn(false)
      }),
    [],
  )
  if (!signedIn)
    return html`<${SignIn}
      message=${message}
      onSignedIn=${() => {
        setMessage(undefined)
        setSignedIn(true)
      }}
    />`
  const tab = (href: string, label: string, active: boolean) => html`<a href=${href} class=${active ? 'active' : ''}>${label}</a>`
  return html` <header class="top">
      <a class="brand" href="/ui/">goalkeeper</a>
      <nav>
        ${tab('/ui/sessions', 'Sessions', path === '/ui' || path.startsWith('/ui/sessions'))} ${tab('/ui/reminders', 'Reminders', path === '/ui/reminders')}
        ${tab('/ui/webhooks', 'Webhooks', path === '/ui/webhooks')}
      </nav>
      <button
        class="sign-out"
        onClick=${() => {
          forgetKey()
          setSignedIn(false)
          navigate('/ui/')
        }}
      >
        Sign out
      </button>
    </header>
    <main><${Page} path=${path} /></main>`
}

render(html`<${App} />`, document.getElementById('app')!)
