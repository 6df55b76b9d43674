import type { Config } from '../config.js'
import type { DbHandle } from '../db/client.js'
import type { Clock } from '../engine/clock.js'
import type { Metrics } from '../metrics.js'
import { AgentsService } from './agents.js'
import { IdempotencyService } from './idempotency.js'

export interface ServiceDeps {
  config: Config
  handle: DbHandle
  clock: Clock
  metrics: Metrics
}

/** Every service, built once per app from its deps (no singletons). Add new services here. */
export function createServices(deps: ServiceDeps) {
  return {
    agents: new AgentsService(deps.handle, deps.clock),
    idempotency: new IdempotencyService(deps.handle, deps.clock),
  }
}

export type Services = ReturnType<typeof createServices>
