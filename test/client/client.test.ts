import { describe, expect, it } from 'vitest'
import { GoalkeeperError } from '@goalkeeper/client'
import { GOAL, liveServer, PLAN } from './live-server.js'

describe('Goalkeeper client against a live server', () => {
  it('creates a session, posts steps and reads the guidance', async () => {
    const { client } = await liveServer()
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN })
    expect(session.id).toMatch(/^ses_/)
    const first = await client.sessions.step(session.id, { description: 'design the user schema', output: 'users table' })
    expect(first.verification.recommended_action).toBe('continue')
    const off = await client.sessions.step(session.id, { description: 'browse cat pictures on reddit' })
    expect(off.verification.recommended_action).toBe('adjust')
    const reminder = await client.sessions.reminder(session.id, { turn: 3 })
    expect(reminder.text).toContain(`[GOAL: ${GOAL}]`)
    const peek = await client.sessions.recitation(session.id, { iteration: 5 })
    expect(peek.should_inject).toBe(true)
    const injected = await client.sessions.recitation(session.id, { iteration: 5, messages: [{ role: 'user', content: 'go on' }] })
    expect(injected.injected).toBe(true)
    expect(injected.messages.map((m) => m.role)).toEqual(['system', 'user'])
    const steps = await client.sessions.steps(session.id)
    expect(steps.items).toHaveLength(2)
  })

  it('surfaces the server problem+json unchanged as a GoalkeeperError', async () => {
    const { client } = await liveServer()
    const err = await client.reminders.create({ title: 'x', trigger: { type: 'scheduled', at: 'not a date' } } as never).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GoalkeeperError)
    const e = err as GoalkeeperError
    expect(e.status).toBe(400)
    expect(e.type).toMatch(/^urn:problem:/)
    expect(e.errors.map((x) => x.path)).toContain('body/trigger/at')
    const missing = await client.sessions.get('ses_nope').catch((x: unknown) => x as GoalkeeperError)
    expect(missing).toMatchObject({ status: 404, instance: '/v1/sessions/ses_nope' })
  })
})
