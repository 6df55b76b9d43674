import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { SessionsService } from './service.js'
import { NumberedPageQuery, problemResponses } from '../schemas.js'
import {
  DriftCheck,
  DriftCheckBody,
  DriftEventList,
  DriftTrend,
  GoalReminder,
  GoalState,
  Pitfalls,
  ReminderBody,
  ReminderQuery,
  SessionParams,
  TextBody,
  TrendQuery,
  TriedApproaches,
} from './schemas.js'
import { InjectRecitationBody, NextTurn, RecitationContext, RecitationContextBody, RecitationInjection, RecitationPreview, RecitationQuery } from './recitation-schemas.js'

const tags = ['sessions']
const params = SessionParams

/** Drift checks, pitfalls and tried approaches, goal reminders and recitation of a session. */
export const sessionGuidanceRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsService }> = async (app, { sessions }) => {
  app.post(
    '/sessions/:id/drift-checks',
    {
      config: { auth: 'agent', idempotent: true },
      schema: {
        operationId: 'checkDrift',
        tags,
        summary: 'Score an action against the goal fingerprint (no LLM); records a drift event below the threshold.',
        params,
        body: DriftCheckBody,
        response: { 200: DriftCheck, ...problemResponses },
      },
    },
    async (request) => await sessions.driftCheck(request.agentId, request.params.id, request.body.action, request.body.step_number, request.uow),
  )

  app.get(
    '/sessions/:id/drift/trend',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'getDriftTrend', tags, summary: 'Similarity trend over the last `window` checks.', params, querystring: TrendQuery, response: { 200: DriftTrend, ...problemResponses } },
    },
    async (request) => await sessions.trend(request.agentId, request.params.id, request.query.window),
  )

  app.get(
    '/sessions/:id/drift/events',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listDriftEvents',
        tags,
        summary: 'Drift events, oldest first.',
        params,
        // Keyed by a bigserial: any integer JavaScript holds exactly.
        querystring: NumberedPageQuery(Number.MAX_SAFE_INTEGER),
        response: { 200: DriftEventList, ...problemResponses },
      },
    },
    async (request) => await sessions.driftEvents(request.agentId, request.params.id, request.query.limit, request.query.cursor),
  )

  app.post(
    '/sessions/:id/drift/reset',
    { config: { auth: 'agent' }, schema: { operationId: 'resetDrift', tags, summary: 'Reset the consecutive drift counter.', params, response: { 200: GoalState, ...problemResponses } } },
    async (request) => await sessions.resetDrift(request.agentId, request.params.id),
  )

  app.post(
    '/sessions/:id/loop/reset',
    { config: { auth: 'agent' }, schema: { operationId: 'resetLoop', tags, summary: 'Forget seen step states and clear the loop flag.', params, response: { 200: GoalState, ...problemResponses } } },
    async (request) => await sessions.resetLoop(request.agentId, request.params.id),
  )

  app.post(
    '/sessions/:id/pitfalls',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'addPitfall', tags, summary: 'Record a pitfall (duplicates ignored).', params, body: TextBody, response: { 200: Pitfalls, ...problemResponses } },
    },
    async (request) => await sessions.addPitfall(request.agentId, request.params.id, request.body.text),
  )

  app.post(
    '/sessions/:id/tried-approaches',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'addTriedApproach', tags, summary: 'Record a tried approach (duplicates ignored).', params, body: TextBody, response: { 200: TriedApproaches, ...problemResponses } },
    },
    async (request) => await sessions.addTriedApproach(request.agentId, request.params.id, request.body.text),
  )

  app.get(
    '/sessions/:id/reminder',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'getGoalReminder',
        tags,
        summary:
          'Build a goal reminder for turn N (full / compact / ultra_compact); progress and drift default to the live state. ' +
          'Read-only: nothing is recorded, and it does not count toward `total_reminders`.',
        params,
        querystring: ReminderQuery,
        response: { 200: GoalReminder, ...problemResponses },
      },
    },
    async (request) => {
      const { turn, ...overrides } = request.query
      return await sessions.reminder(request.agentId, request.params.id, turn, overrides)
    },
  )

  app.post(
    '/sessions/:id/reminder',
    {
      config: { auth: 'agent', idempotent: true },
      schema: {
        operationId: 'recordGoalReminder',
        tags,
        summary:
          'Build the goal reminder for turn N, as the GET does, and record it as shown to the agent: it joins the reminder history, ' +
          'counts toward `total_reminders`, and is the last one injected for `skip_unchanged`.',
        params,
        body: ReminderBody,
        response: { 200: GoalReminder, ...problemResponses },
      },
    },
    async (request) => {
      const { turn, ...overrides } = request.body
      return await sessions.recordReminder(request.agentId, request.params.id, turn, overrides, request.uow)
    },
  )

  app.put(
    '/sessions/:id/context',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'setRecitationContext',
        tags,
        summary: 'Set the recitation context; the fields given replace the stored ones.',
        params,
        body: RecitationContextBody,
        response: { 200: RecitationContext, ...problemResponses },
      },
    },
    async (request) => await sessions.setContext(request.agentId, request.params.id, request.body),
  )

  app.get(
    '/sessions/:id/recitation',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'getRecitation',
        tags,
        summary: 'The recitation block for iteration N and whether it is due. Read-only.',
        params,
        querystring: RecitationQuery,
        response: { 200: RecitationPreview, ...problemResponses },
      },
    },
    async (request) => await sessions.recitation(request.agentId, request.params.id, request.query.iteration, request.query.context_tokens),
  )

  app.get(
    '/sessions/:id/next-turn',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'getNextTurn',
        tags,
        summary: 'The goal reminder and recitation the next turn would get (iteration = next step number), before the token budget. Read-only.',
        params,
        response: { 200: NextTurn, ...problemResponses },
      },
    },
    async (request) => await sessions.nextTurn(request.agentId, request.params.id),
  )

  app.post(
    '/sessions/:id/recitation',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'injectRecitation',
        tags,
        summary: 'Insert the recitation block before the last user message when due (or forced) and record it.',
        params,
        body: InjectRecitationBody,
        response: { 200: RecitationInjection, ...problemResponses },
      },
    },
    async (request) => await sessions.injectRecitation(request.agentId, request.params.id, request.body),
  )
}
