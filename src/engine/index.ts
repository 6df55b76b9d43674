/** The public library entry, "goalkeeper/engine": pure, synchronous, no I/O. */
export * from './clock.js'
export * from './goal-reminder.js'
export * from './recitation.js'
export * from './injection-budget.js'
