import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AgentsService } from './service.js'
import { Body, Id, ListOf, PaginationQuery, problemResponses, Timestamp } from '../schemas.js'

const Agent = Type.Object({ id: Id('agt'), name: Type.String(), created_at: Timestamp }, { title: 'Agent' })
const CreatedAgent = Type.Object(
  {
    id: Id('agt'),
    name: Type.String(),
    api_key: Type.String({ description: 'Shown once; only its hash is stored.' }),
    created_at: Timestamp,
  },
  { title: 'CreatedAgent' },
)
const CreatedKey = Type.Object({ id: Id('key'), api_key: Type.String({ description: 'Shown once; only its hash is stored.' }), created_at: Timestamp }, { title: 'CreatedApiKey' })
const CreateAgentBody = Body({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { examples: [{ name: 'search-api-agent' }] })
const AgentParams = Type.Object({ agent_id: Id('agt') })
const security = [{ adminToken: [] }]

/** Admin-only agent management: every route declares `auth: 'admin'` (see src/agents/auth.ts). */
export const agentRoutes: FastifyPluginAsyncTypebox<{ agents: AgentsService }> = async (app, { agents }) => {
  app.post(
    '/agents',
    {
      config: { auth: 'admin', idempotent: true },
      schema: {
        operationId: 'createAgent',
        tags: ['agents'],
        summary: 'Create an agent and its first API key.',
        security,
        body: CreateAgentBody,
        response: { 201: CreatedAgent, ...problemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await request.uow.run(() => agents.create(request.body.name))),
  )

  app.get(
    '/agents',
    {
      config: { auth: 'admin' },
      schema: {
        operationId: 'listAgents',
        tags: ['agents'],
        summary: 'List agents, oldest first.',
        security,
        querystring: PaginationQuery('agt'),
        response: { 200: ListOf(Agent), ...problemResponses },
      },
    },
    async (request) => agents.list(request.query.limit, request.query.cursor),
  )

  app.delete(
    '/agents/:agent_id',
    {
      config: { auth: 'admin' },
      schema: {
        operationId: 'deleteAgent',
        tags: ['agents'],
        summary: 'Delete an agent and all of its data.',
        security,
        params: AgentParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      await agents.delete(request.params.agent_id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/agents/:agent_id/keys',
    {
      config: { auth: 'admin', idempotent: true },
      schema: {
        operationId: 'createApiKey',
        tags: ['agents'],
        summary: 'Issue another API key (existing keys keep working until deleted).',
        security,
        params: AgentParams,
        response: { 201: CreatedKey, ...problemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await request.uow.run(() => agents.createKey(request.params.agent_id))),
  )

  app.delete(
    '/agents/:agent_id/keys/:key_id',
    {
      config: { auth: 'admin' },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['agents'],
        summary: 'Revoke an API key.',
        security,
        params: Type.Object({ agent_id: Id('agt'), key_id: Id('key') }),
        response: { 204: Type.Null({ description: 'Revoked.' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      await agents.deleteKey(request.params.agent_id, request.params.key_id)
      return reply.code(204).send(null)
    },
  )
}
