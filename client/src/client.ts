import createClient from 'openapi-fetch'
import type { paths } from './generated/openapi.js'
import type { Api } from './call.js'
import { PlainRequest, retryingFetch, type RetryOptions } from './retry.js'
import { Reminders, Settings, Turns } from './resources/reminders.js'
import { Sessions } from './resources/sessions.js'
import { Webhooks } from './resources/webhooks.js'

export type { Api } from './call.js'

export interface GoalkeeperOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string
  /** The agent's API key (`gk_…`), sent as `Authorization: Bearer`. */
  apiKey: string
  /** Retry and timeout policy for the requests that are safe to repeat. */
  retry?: RetryOptions
  /** A fetch to send requests with (tests, proxies); defaults to the global one. */
  fetch?: typeof fetch
  /** Extra headers on every request. */
  headers?: Record<string, string>
}

/**
 * The goalkeeper REST API, typed from its OpenAPI document. The resource groups cover what an
 * agent calls in its loop; `api` is the generated openapi-fetch client for everything else.
 */
export class Goalkeeper {
  readonly api: Api
  readonly sessions: Sessions
  readonly reminders: Reminders
  readonly turns: Turns
  readonly settings: Settings
  readonly webhooks: Webhooks

  constructor(options: GoalkeeperOptions) {
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
      Request: PlainRequest as unknown as typeof Request,
      fetch: retryingFetch(options.retry, options.fetch) as unknown as typeof fetch,
    })
    this.sessions = new Sessions(this.api)
    this.reminders = new Reminders(this.api)
    this.turns = new Turns(this.api)
    this.settings = new Settings(this.api)
    this.webhooks = new Webhooks(this.api)
  }
}
