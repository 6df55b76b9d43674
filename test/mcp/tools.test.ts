import { describe, expect, it } from 'vitest'
import { CreateReminder, SnoozeBody, TurnBody } from '../../src/reminders/schemas.js'
import { CreateSessionBody, Session, StepBody, StepResult } from '../../src/sessions/schemas.js'
import { buildTestApp } from '../helpers.js'
import { GOAL, PLAN, RUN } from '../http/sessions-fixtures.js'
import { call, connect, listen } from './client.js'

const json = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown

async function setup() {
  const t = await buildTestApp()
  const url = await listen(t)
  const agent = await t.createAgent('a')
  return { t, url, agent, client: await connect(url, agent.headers) }
}

describe('MCP tools over Streamable HTTP', () => {
  it('lists the eleven tools with input schemas made of the REST schemas and output schemas of the REST bodies', async () => {
    const { client } = await setup()
    const { tools } = await client.listTools()
    expect(tools.map((x) => x.name)).toEqual([
      'start_goal_session',
      'record_step',
      'get_goal_reminder',
      'get_recitation',
      'turn_start',
      'create_reminder',
      'list_reminders',
      'search_reminders',
      'complete_reminder',
      'snooze_reminder',
      'dismiss_reminder',
    ])
    const tool = (name: string) => tools.find((x) => x.name === name)!
    for (const x of tools) {
      expect(x.description, x.name).toBeTruthy()
      expect(x.inputSchema, x.name).toMatchObject({ type: 'object', additionalProperties: false })
      expect(x.outputSchema, x.name).toMatchObject({ type: 'object' })
    }
    // The same schemas as the routes: a field added to a route's body shows up in its tool.
    expect(tool('start_goal_session').inputSchema.properties).toEqual(json(CreateSessionBody.properties))
    expect(tool('start_goal_session').outputSchema).toEqual(json(Session))
    expect(tool('record_step').inputSchema.properties).toEqual({ session_id: expect.objectContaining({ pattern: '^ses_[A-Za-z0-9_-]+$' }), ...(json(StepBody.properties) as object) })
    expect(tool('record_step').inputSchema.required).toEqual(['session_id', 'description'])
    expect(tool('record_step').outputSchema).toEqual(json(StepResult))
    expect(tool('turn_start').inputSchema.properties).toEqual(json(TurnBody.properties))
    expect(tool('create_reminder').inputSchema.properties).toEqual(json(CreateReminder.properties))
    expect(Object.keys(tool('snooze_reminder').inputSchema.properties!)).toEqual(['reminder_id', ...Object.keys(SnoozeBody.properties)])
    expect(tool('get_goal_reminder').annotations).toMatchObject({ readOnlyHint: true })
    expect(tool('record_step').annotations).toMatchObject({ readOnlyHint: false })
  })

  it('runs a session through start_goal_session and record_step until the verdict changes', async () => {
    const { t, client, agent } = await setup()
    const started = await call(client, 'start_goal_session', { goal: GOAL, plan: PLAN })
    expect(started.isError).toBeFalsy()
    const id = started.data.id as string
    expect(id).toMatch(/^ses_/)
    expect(started.text).toContain(id)
    // The REST body, as GET /v1/sessions/{id} gives it.
    const rest = await t.app.inject({ url: `/v1/sessions/${id}`, headers: agent.headers })
    expect(started.data).toEqual(rest.json())

    const verdicts = []
    for (const description of RUN) verdicts.push(await call(client, 'record_step', { session_id: id, description }))
    expect(verdicts.map((v) => v.data.verification.recommended_action)).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    expect(verdicts[0]!.text).toMatch(/^Step 1 is aligned with the goal \(alignment 0\.\d\d\) with .+; recommended action: continue, carry on with the plan\.$/)
    expect(verdicts[2]!.data.verification.aligned).toBe(false)
    expect(verdicts[2]!.text).toMatch(
      /^Step 3 is not aligned with the goal \(alignment 0\.\d\d\) with (low|moderate|high|critical)(, sustained)? drift \(similarity 0\.\d\d\); recommended action: adjust, /,
    )
    expect(verdicts[4]!.data.state.loop_detected).toBe(true)
    // The loop is named by kind, with the engine's advice on what repeats and what to do instead.
    expect(verdicts[4]!.text).toContain('a repeat loop; recommended action: adjust, the same step with the same result has come back 3 times (steps 3, 4, 5)')
    expect(verdicts[5]!.text).toContain('recommended action: replan')
    // One sentence each: nothing after the full stop.
    for (const v of verdicts) expect(v.text.indexOf('.', v.text.lastIndexOf(',')) === v.text.length - 1).toBe(true)

    const steps = await t.app.inject({ url: `/v1/sessions/${id}/steps`, headers: agent.headers })
    expect(steps.json().items).toHaveLength(RUN.length)
  })

  it('serves the goal reminder, the recitation and turn start for the session', async () => {
    const { client } = await setup()
    const id = (await call(client, 'start_goal_session', { goal: GOAL, plan: PLAN })).data.id as string
    await call(client, 'record_step', { session_id: id, description: RUN[0] })

    const reminder = await call(client, 'get_goal_reminder', { session_id: id, turn: 3 })
    expect(reminder.data).toMatchObject({ mode: 'full', turn_number: 3 })
    expect(reminder.text).toBe(reminder.data.text)
    expect(reminder.text).toContain(GOAL)

    const recitation = await call(client, 'get_recitation', { session_id: id, iteration: 1 })
    expect(recitation.data.should_inject).toBe(true)
    expect(recitation.text).toBe(recitation.data.text)
    expect(recitation.text).toContain('[Current Status - Iteration 1]')
    const notDue = await call(client, 'get_recitation', { session_id: id, iteration: 2 })
    expect(notDue.data.should_inject).toBe(false)
    expect(notDue.text).toMatch(/^Not due at iteration 2 \(every 5 iterations\); the block would be:\n\[Current Status - Iteration 2\]/)

    const turn = await call(client, 'turn_start', { user_message: 'go on', session_id: id, iteration: 1 })
    expect(turn.data.parts.map((p: { kind: string }) => p.kind)).toEqual(expect.arrayContaining(['goal_reminder']))
    expect(turn.text).toBe(turn.data.injection.text)
    expect(turn.text).toContain(GOAL)
    expect((await call(client, 'turn_start', { user_message: 'hello' })).text).toBe('Nothing to inject this turn.')
  })

  it('round-trips reminders: create, list, search, turn start, snooze, complete, dismiss', async () => {
    const { client } = await setup()
    const created = await call(client, 'create_reminder', {
      title: 'Run the smoke tests',
      trigger: { type: 'context', pattern: 'deploy' },
      context_tags: ['release'],
    })
    expect(created.isError).toBeFalsy()
    const rem = created.data.id as string
    expect(created.text).toBe(`Created reminder ${rem} [pending, normal, on "deploy"] Run the smoke tests.`)

    const listed = await call(client, 'list_reminders', { tag: 'release' })
    expect(listed.data.items.map((r: { id: string }) => r.id)).toEqual([rem])
    expect(listed.text).toBe(`1 reminder:\n${rem} [pending, normal, on "deploy"] Run the smoke tests`)
    expect((await call(client, 'list_reminders', { tag: 'nothing' })).text).toBe('No reminders.')

    const found = await call(client, 'search_reminders', { q: 'smoke' })
    expect(found.data.items.map((x: { reminder: { id: string } }) => x.reminder.id)).toEqual([rem])
    expect(found.text).toContain(rem)

    const turn = await call(client, 'turn_start', { user_message: 'time to deploy' })
    expect(turn.data.reminders.map((r: { id: string }) => r.id)).toEqual([rem])
    expect(turn.text).toContain('Run the smoke tests')

    const snoozed = await call(client, 'snooze_reminder', { reminder_id: rem, minutes: 1 })
    expect(snoozed.data).toMatchObject({ id: rem, status: 'snoozed', clamped: true })
    expect(snoozed.text).toBe(`Reminder ${rem} snoozed until ${snoozed.data.snooze_until} (the duration was clamped to its priority bounds).`)

    const completed = await call(client, 'complete_reminder', { reminder_id: rem })
    expect(completed.data.status).toBe('completed')
    expect(completed.text).toBe(`Reminder ${rem} is now completed.`)
    const again = await call(client, 'complete_reminder', { reminder_id: rem })
    expect(again.isError).toBe(true)

    const other = await call(client, 'create_reminder', { title: 'Stand-up', trigger: { type: 'scheduled', at: '2030-01-01T09:00:00Z' } })
    expect(other.text).toContain('next 2030-01-01T09:00:00.000Z')
    expect((await call(client, 'dismiss_reminder', { reminder_id: other.data.id })).data.status).toBe('dismissed')
  })
})

describe('tool errors are tool results, never transport errors', () => {
  it("another agent's session or reminder id is isError with the 404's detail", async () => {
    const { t, url, client } = await setup()
    const id = (await call(client, 'start_goal_session', { goal: GOAL })).data.id as string
    const rem = (await call(client, 'create_reminder', { title: 'x', trigger: { type: 'context', pattern: 'y' } })).data.id as string
    const intruder = await connect(url, (await t.createAgent('b')).headers)

    const step = await call(intruder, 'record_step', { session_id: id, description: 'peek' })
    expect(step.isError).toBe(true)
    expect(step.structuredContent).toBeUndefined()
    expect(step.text).toBe(`No session with id ${id}.`)
    expect((await call(intruder, 'get_goal_reminder', { session_id: id, turn: 1 })).text).toBe(`No session with id ${id}.`)
    expect((await call(intruder, 'complete_reminder', { reminder_id: rem })).text).toBe(`No reminder with id ${rem}.`)
    // Untouched for its owner.
    expect((await call(client, 'record_step', { session_id: id, description: 'a step' })).data.step_number).toBe(1)
  })

  it('bad arguments are isError with the problem detail, naming the arguments rather than REST paths', async () => {
    const { client } = await setup()
    const id = (await call(client, 'start_goal_session', { goal: GOAL })).data.id as string

    const empty = await call(client, 'record_step', { session_id: id, description: '' })
    expect(empty.isError).toBe(true)
    expect(empty.text).toBe('Invalid request: description must NOT have fewer than 1 characters.')
    const badId = await call(client, 'record_step', { session_id: 'nope', description: 'x' })
    expect(badId.text).toBe('Invalid request: session_id must match pattern "^ses_[A-Za-z0-9_-]+$".')
    const nested = await call(client, 'create_reminder', { title: 'x', trigger: { type: 'scheduled', at: 'tomorrow' } })
    expect(nested.isError).toBe(true)
    expect(nested.text).toContain('trigger/at')
    expect(nested.text).not.toContain('body/')
    const query = await call(client, 'get_goal_reminder', { session_id: id, turn: 'soon' })
    expect(query.text).toBe('Invalid request: turn must be integer.')
    expect((await call(client, 'start_goal_session', { goal: GOAL, config: { drift_treshold: 0.2 } })).text).toBe('Invalid request: config/drift_treshold is not a known field.')
    expect((await call(client, 'record_step', { description: 'x' })).text).toBe('session_id is required.')
    expect((await call(client, 'list_reminders', { colour: 'red' })).text).toMatch(/^Unknown argument colour; list_reminders takes status, priority/)
    expect((await call(client, 'snooze_reminder', { reminder_id: 'rem_missing' })).isError).toBe(true)
  })

  it('an unknown tool is a JSON-RPC error', async () => {
    const { client } = await setup()
    await expect(client.callTool({ name: 'drop_tables', arguments: {} })).rejects.toThrow(/Unknown tool drop_tables/)
  })
})
