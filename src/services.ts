import type { Config } from './config.js'
import type { DbHandle } from './db/client.js'
import type { Clock } from './engine/clock.js'
import type { Metrics } from './metrics.js'
import { AgentsService } from './agents/service.js'
import { IdempotencyService } from './idempotency/service.js'
import { createEmbed, GoalEmbeddings } from './providers/embeddings.js'
import { createLlmVerify, OPINION_MAX_TOKENS } from './providers/llm-verify.js'
import { SessionsService } from './sessions/service.js'
import { ReminderRepository } from './reminders/repository.js'
import { ReminderSearch } from './reminders/search.js'
import { RemindersService } from './reminders/service.js'
import { SettingsService } from './reminders/settings.js'
import { TurnsService } from './reminders/turns.js'
import { WebhooksService } from './webhooks/service.js'
import { HooksService } from './hooks/service.js'
import { OtlpService } from './otlp/service.js'

export interface ServiceDeps {
  config: Config
  handle: DbHandle
  clock: Clock
  metrics: Metrics
}

/** Every service, built once per app from its deps (no singletons). Add new services here. */
export function createServices(deps: ServiceDeps) {
  const reminderRepo = new ReminderRepository(deps.handle.db)
  const settings = new SettingsService(reminderRepo, deps.clock)
  const reminders = new RemindersService(reminderRepo, settings, deps.clock)
  const reminderSearch = new ReminderSearch(reminderRepo)
  const sessions = new SessionsService({
    db: deps.handle.db,
    clock: deps.clock,
    metrics: deps.metrics,
    ...(deps.config.llm === undefined
      ? {}
      : { llmVerify: createLlmVerify(deps.config.llm), llmOpinion: createLlmVerify(deps.config.llm, OPINION_MAX_TOKENS), llmTimeoutMs: deps.config.llm.timeoutMs }),
    ...(deps.config.embeddings === undefined
      ? {}
      : {
          embeddings: new GoalEmbeddings(createEmbed(deps.config.embeddings), deps.config.embeddings.timeoutMs, {
            breaker: deps.config.embeddings.breaker,
            clock: deps.clock,
            onFallback: (reason) => deps.metrics.embeddingsFallbacks.inc({ reason }),
          }),
        }),
  })
  // Sessions contribute their goal reminder and recitation to each turn.
  const turns = new TurnsService({ reminders, repo: reminderRepo, settings, search: reminderSearch, clock: deps.clock, provider: sessions })
  return {
    // Its sessions go with a deleted agent: drop them from the session cache too.
    agents: new AgentsService(deps.handle.db, deps.clock, (agentId) => sessions.forgetAgent(agentId)),
    idempotency: new IdempotencyService(deps.handle.db, deps.clock, deps.config.idempotencySecret),
    sessions,
    settings,
    reminders,
    reminderSearch,
    turns,
    hooks: new HooksService({ sessions, turns, settings }),
    otlp: new OtlpService({ db: deps.handle.db, sessions, settings, clock: deps.clock, metrics: deps.metrics, maxBacklog: deps.config.otlpMaxBacklog }),
    webhooks: new WebhooksService(deps.handle.db, deps.clock, deps.config.webhook),
  }
}

export type Services = ReturnType<typeof createServices>
