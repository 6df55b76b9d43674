import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { SessionsService } from './service.js'
import { ToolsBody, ToolsReply } from './detection-schemas.js'
import { INT4_MAX, NumberedPageQuery, problemResponses } from '../schemas.js'
import {
  CreateSessionBody,
  Session,
  SessionDigestList,
  SessionList,
  SessionListQuery,
  SessionParams,
  SetGoalBody,
  SetPlanBody,
  StepBody,
  StepList,
  StepResult,
  Summary,
  UpdateSessionBody,
} from './schemas.js'

const tags = ['sessions']

/** Goal sessions: lifecycle, goal and plan, summary and the per-step verdict. */
export const sessionRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsService }> = async (app, { sessions }) => {
  app.post(
    '/sessions',
    {
      config: { auth: 'agent', idempotent: true },
      schema: {
        operationId: 'createSession',
        tags,
        summary: 'Open a goal session.',
        body: CreateSessionBody,
        response: { 201: Session, ...problemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await sessions.create(request.agentId, request.body, request.uow)),
  )

  app.get(
    '/sessions',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'listSessions', tags, summary: 'List sessions, oldest first.', querystring: SessionListQuery, response: { 200: SessionList, ...problemResponses } },
    },
    async ({ agentId, query: { limit, cursor, ...filter } }) => await sessions.list(agentId, filter, limit, cursor),
  )

  app.get(
    '/sessions/overview',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listSessionDigests',
        tags,
        summary: 'Sessions newest first, each with its step count, last recommended action and recent similarity (the dashboard list).',
        querystring: SessionListQuery,
        response: { 200: SessionDigestList, ...problemResponses },
      },
    },
    async ({ agentId, query: { limit, cursor, ...filter } }) => await sessions.overview(agentId, filter, limit, cursor),
  )

  app.get(
    '/sessions/:id',
    { config: { auth: 'agent' }, schema: { operationId: 'getSession', tags, summary: 'Get a session.', params: SessionParams, response: { 200: Session, ...problemResponses } } },
    async (request) => await sessions.get(request.agentId, request.params.id),
  )

  app.patch(
    '/sessions/:id',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'updateSession',
        tags,
        summary: 'Archive or unarchive a session, or replace its metadata. Archived sessions are read-only (409).',
        params: SessionParams,
        body: UpdateSessionBody,
        response: { 200: Session, ...problemResponses },
      },
    },
    async (request) => await sessions.update(request.agentId, request.params.id, request.body),
  )

  app.delete(
    '/sessions/:id',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'deleteSession',
        tags,
        summary: 'Delete a session with its step log and drift events.',
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      await sessions.delete(request.agentId, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.put(
    '/sessions/:id/goal',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'setGoal',
        tags,
        summary: 'Replace the goal: new fingerprint; clears pitfalls, tried approaches and reminder history.',
        params: SessionParams,
        body: SetGoalBody,
        response: { 200: Session, ...problemResponses },
      },
    },
    async (request) => await sessions.setGoal(request.agentId, request.params.id, request.body.goal),
  )

  app.put(
    '/sessions/:id/plan',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'setPlan',
        tags,
        summary: 'Replace the plan (step counter back to 0).',
        params: SessionParams,
        body: SetPlanBody,
        response: { 200: Session, ...problemResponses },
      },
    },
    async (request) => await sessions.setPlan(request.agentId, request.params.id, request.body.steps),
  )

  app.put(
    '/sessions/:id/tools',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'setTools',
        tags,
        summary: 'Report the tools the agent has now: a step calling another is named at once (replaces config.tools and any earlier report).',
        params: SessionParams,
        body: ToolsBody,
        response: { 200: ToolsReply, ...problemResponses },
      },
    },
    async (request) => await sessions.reportTools(request.agentId, request.params.id, request.body.tools),
  )

  app.get(
    '/sessions/:id/summary',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'getSessionSummary', tags, summary: 'Progress, drift, loops and counters of a session.', params: SessionParams, response: { 200: Summary, ...problemResponses } },
    },
    async (request) => await sessions.summary(request.agentId, request.params.id),
  )

  app.post(
    '/sessions/:id/steps',
    {
      config: { auth: 'agent', idempotent: true, textMended: ['description', 'output', 'tool'] },
      schema: {
        operationId: 'recordStep',
        tags,
        summary: 'Verify a step: alignment, drift, loop and stall, and the recommended action.',
        params: SessionParams,
        body: StepBody,
        response: { 201: StepResult, ...problemResponses },
      },
    },
    async (request, reply) => {
      const result = await sessions.step(request.agentId, request.params.id, request.body, request.uow)
      return reply.code(201).send(result)
    },
  )

  app.get(
    '/sessions/:id/steps',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listSteps',
        tags,
        summary: 'The step log, oldest first (cursor: the last step_number seen).',
        params: SessionParams,
        querystring: NumberedPageQuery(INT4_MAX),
        response: { 200: StepList, ...problemResponses },
      },
    },
    async (request) => await sessions.steps(request.agentId, request.params.id, request.query.limit, request.query.cursor),
  )
}
