// The PostgreSQL schema, table for table the twin of src/db/schema (SQLite); drizzle-kit reads this index.
export * from './agents.js'
export * from './reminders.js'
export * from './sessions.js'
export * from './webhooks.js'
export * from './otlp.js'
