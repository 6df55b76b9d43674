import { describe, expect, it } from 'vitest'
import { CircuitBreaker } from '../../src/providers/circuit-breaker.js'

describe('CircuitBreaker', () => {
  it('lets only the trial decide a half-open circuit: a call started earlier and failing meanwhile just counts', () => {
    let now = 0
    const breaker = new CircuitBreaker({ failures: 2, cooldownMs: 1000 }, () => now)
    const early = breaker.admit()
    const a = breaker.admit()
    const b = breaker.admit()
    if (typeof early === 'string' || typeof a === 'string' || typeof b === 'string') throw new Error('closed circuit refused')
    breaker.failed(a)
    breaker.failed(b)
    expect(breaker.admit()).toMatch(/circuit open after 2 consecutive failures\), retrying in 1 s$/)

    now += 1000
    const trial = breaker.admit()
    expect(trial).toEqual({ trial: true })
    breaker.failed(early)
    expect(breaker.admit()).toMatch(/a trial request is under way$/)

    breaker.succeeded(trial as { trial: boolean })
    expect(breaker.admit()).toEqual({ trial: false })
  })

  it('a failed trial opens the circuit for a new cool-down', () => {
    let now = 0
    const breaker = new CircuitBreaker({ failures: 1, cooldownMs: 1000 }, () => now)
    breaker.failed(breaker.admit() as { trial: boolean })
    now += 1000
    breaker.failed(breaker.admit() as { trial: boolean })
    now += 400
    expect(breaker.admit()).toMatch(/retrying in 1 s$/)
    now += 600
    expect(breaker.admit()).toEqual({ trial: true })
  })
})
