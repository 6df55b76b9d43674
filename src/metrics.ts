import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * One registry per app instance (tests build many apps in one process; prom-client's global
 * registry would refuse the second registration). Services get this object and bump counters.
 */
export interface Metrics {
  registry: Registry
  httpDuration: Histogram<'method' | 'route' | 'status_code'>
  verdicts: Counter<'action'>
  driftEvents: Counter<'severity'>
  reminderFires: Counter<'trigger_type'>
  webhookAttempts: Counter<'outcome'>
  embeddingsFallbacks: Counter<'reason'>
  hookEvents: Counter<'client' | 'answer'>
  hookFailures: Counter<'client'>
  otlpRecords: Counter<'signal' | 'outcome'>
  otlpApplied: Counter<'kind' | 'outcome'>
  otlpBacklog: Gauge
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (options.processMetrics) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  return {
    registry,
    httpDuration: new Histogram({
      name: 'goalkeeper_http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    verdicts: new Counter({
      name: 'goalkeeper_step_verdicts_total',
      help: 'Step verdicts by recommended action.',
      labelNames: ['action'],
      registers,
    }),
    driftEvents: new Counter({
      name: 'goalkeeper_drift_events_total',
      help: 'Drift events by severity.',
      labelNames: ['severity'],
      registers,
    }),
    reminderFires: new Counter({
      name: 'goalkeeper_reminder_fires_total',
      help: 'Reminder fires by trigger type.',
      labelNames: ['trigger_type'],
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'goalkeeper_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (success, failure, timeout, ...).',
      labelNames: ['outcome'],
      registers,
    }),
    embeddingsFallbacks: new Counter({
      name: 'goalkeeper_embeddings_fallbacks_total',
      help: 'Embeddings checks scored by enhanced instead, by reason (timeout, error, circuit_open).',
      labelNames: ['reason'],
      registers,
    }),
    hookEvents: new Counter({
      name: 'goalkeeper_hook_events_total',
      help: "Coding agents' hook events by client and answer (none, context, deny, block).",
      labelNames: ['client', 'answer'],
      registers,
    }),
    hookFailures: new Counter({
      name: 'goalkeeper_hook_failures_total',
      help: 'Hook events goalkeeper failed to handle, answered with no decision (the agent goes on).',
      labelNames: ['client'],
      registers,
    }),
    otlpRecords: new Counter({
      name: 'goalkeeper_otlp_records_total',
      help: 'What OTLP exports said (goals, prompts, tool calls, usage) by signal and outcome (new, duplicate, rejected).',
      labelNames: ['signal', 'outcome'],
      registers,
    }),
    otlpApplied: new Counter({
      name: 'goalkeeper_otlp_applied_total',
      help: 'OTLP records applied to sessions by kind and outcome (applied, dropped, failed).',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    otlpBacklog: new Gauge({
      name: 'goalkeeper_otlp_backlog',
      help: 'OTLP records this process has stored and not yet applied to their sessions.',
      registers,
    }),
  }
}
