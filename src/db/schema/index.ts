// One file per resource; drizzle-kit reads this index to generate migrations.
export * from './agents.js'
export * from './idempotency.js'
export * from './reminders.js'
export * from './webhooks.js'
export * from './reminder-fires.js'
export * from './sessions.js'
export * from './otlp.js'
