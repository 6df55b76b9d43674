import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { EVENT_TYPES } from './outbox.js'
import type { WebhooksService } from './service.js'
import { Body, Id, ListOf, PaginationQuery, problemResponses, Timestamp } from '../schemas.js'

const EventType = Type.Enum(EVENT_TYPES)
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

const webhookFields = {
  id: Id('whk'),
  url: Type.String(),
  event_types: Type.Array(Type.String(), { description: 'Event types delivered; empty means every type.' }),
  description: Nullable(Type.String()),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  disabled_reason: Nullable(Type.String({ description: 'Why the endpoint was disabled (410 Gone, sustained failure, API).' })),
  failing_since: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}
const Webhook = Type.Object(webhookFields, { title: 'Webhook' })
const CreatedWebhook = Type.Object({ ...webhookFields, secret: Type.String({ description: '`whsec_` + base64; shown on create and rotate only.' }) }, { title: 'CreatedWebhook' })
const Attempt = Type.Object(
  {
    id: Type.String(),
    message_id: Type.String({ description: 'The `webhook-id` header value, stable across retries.' }),
    event_type: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    status_code: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    duration_ms: Type.Integer(),
    created_at: Timestamp,
    next_attempt_at: Nullable(Timestamp),
  },
  { title: 'WebhookAttempt' },
)
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute http(s) URL (else 400); private addresses are refused (422) unless allowed.' })
// example.com resolves to a public address, so the example passes the private-address guard.
const CreateWebhookBody = Body(
  {
    url: Url,
    event_types: Type.Optional(Type.Array(EventType, { maxItems: 10 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  {
    examples: [
      {
        url: 'https://example.com/hooks/goalkeeper',
        event_types: ['reminder.triggered', 'session.drift_detected'],
        description: 'Relay to the team chat',
      },
    ],
  },
)
const PatchWebhookBody = Body(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(Type.Array(EventType, { maxItems: 10 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')])),
  },
  { examples: [{ event_types: ['reminder.triggered', 'session.drift_detected', 'session.loop_detected', 'session.stalled'] }] },
)
const Params = Type.Object({ id: Id('whk') })
const tags = ['webhooks']

/** Webhook subscriptions of the calling agent (Standard Webhooks v1 delivery). */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.post(
    '/webhooks',
    {
      config: { auth: 'agent', idempotent: true },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Subscribe an endpoint; the response carries its signing secret (shown once).',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...problemResponses },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(request.agentId, request.body, request.uow)
      return reply.code(201).send(created)
    },
  )

  app.get(
    '/webhooks',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'listWebhooks', tags, summary: 'List webhook subscriptions, oldest first.', querystring: PaginationQuery('whk'), response: { 200: ListOf(Webhook), ...problemResponses } },
    },
    async (request) => await webhooks.list(request.agentId, request.query),
  )

  app.get(
    '/webhooks/:id',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'getWebhook', tags, summary: 'Get a webhook subscription (never its secret).', params: Params, response: { 200: Webhook, ...problemResponses } },
    },
    async (request) => await webhooks.get(request.agentId, request.params.id),
  )

  app.patch(
    '/webhooks/:id',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change a subscription; `status: "active"` re-enables a disabled one and resumes its held deliveries.',
        params: Params,
        body: PatchWebhookBody,
        response: { 200: Webhook, ...problemResponses },
      },
    },
    async (request) => await webhooks.update(request.agentId, request.params.id, request.body),
  )

  app.delete(
    '/webhooks/:id',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a subscription and its queued deliveries.',
        params: Params,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses },
      },
    },
    async (request, reply) => {
      await webhooks.remove(request.agentId, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'New signing secret; the old one keeps signing alongside it for 24 h.',
        params: Params,
        response: {
          200: Type.Object({ secret: Type.String(), previous_secret_expires_at: Timestamp }, { title: 'RotatedSecret' }),
          ...problemResponses,
        },
      },
    },
    async (request) => await webhooks.rotateSecret(request.agentId, request.params.id),
  )

  app.post(
    '/webhooks/:id/test',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Queue a signed `webhook.test` event for this endpoint.',
        params: Params,
        response: { 202: Type.Object({ message_id: Id('msg') }, { title: 'QueuedTest' }), ...problemResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.sendTest(request.agentId, request.params.id)),
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'The attempts log of this endpoint, newest first.',
        params: Params,
        querystring: PaginationQuery('evt'),
        response: { 200: ListOf(Attempt), ...problemResponses },
      },
    },
    async (request) => await webhooks.attempts(request.agentId, request.params.id, request.query),
  )

  app.post(
    '/webhooks/:id/deliveries/:message_id/retry',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags,
        summary: 'Deliver this message to this endpoint again now (same `webhook-id`).',
        params: Type.Object({ id: Id('whk'), message_id: Id('msg') }),
        response: {
          202: Type.Object({ message_id: Id('msg'), status: Type.Literal('queued') }, { title: 'QueuedRetry' }),
          ...problemResponses,
        },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.retry(request.agentId, request.params.id, request.params.message_id)),
  )
}
