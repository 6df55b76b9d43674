/**
 * `POST /v1/otlp/v1/traces` and `/v1/otlp/v1/logs`: an OTLP/HTTP receiver (the paths an exporter
 * appends to `OTEL_EXPORTER_OTLP_ENDPOINT=…/v1/otlp`), answering as the OTLP spec says: binary
 * protobuf or JSON, gzip or not, the answer in the request's own encoding, 200 with
 * `partial_success` counting what was rejected, and every failure a google.rpc.Status (400 for a
 * body that does not decode, 413 past the size limit after decompression, 429 / 503 with
 * Retry-After when shedding). It observes only: an exporter reads nothing back but the counts.
 */
import { createGunzip } from 'node:zlib'
import type { FastifyError, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { databaseFault } from '../db/faults.js'
import { AppError } from '../errors.js'
import { decodeBinary, encodeResponse, encodeStatus, fromJson, responseJson, responseMessage, type Signal } from './proto.js'
import type { OtlpService } from './service.js'

/** The largest body, after decompression (the spec suggests 64 MiB; a 192 MiB heap cannot decode that). */
export const OTLP_BODY_LIMIT = 8 * 1024 * 1024

const PROTOBUF = 'application/x-protobuf'
const JSON_TYPE = 'application/json'

/** The request's encoding, which the answer takes; undefined for another content type (answered as problem+json). */
function encodingOf(request: FastifyRequest): 'binary' | 'json' | undefined {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  return type === PROTOBUF || type === 'application/protobuf' ? 'binary' : type === JSON_TYPE ? 'json' : undefined
}

/** A gzip body inflated as it is read; the body limit then counts inflated bytes (Fastify's "zip bomb" check). */
const gunzip: preParsingHookHandler = (request, _reply, payload, done) => {
  const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase()
  if (encoding === 'identity') return done(null, payload)
  if (encoding !== 'gzip') return done(new AppError(415, 'unsupported_media_type', `Content-Encoding ${encoding} is not supported: send gzip or none.`))
  const inflated = Object.assign(createGunzip(), { receivedEncodedLength: 0 })
  payload.on('data', (chunk: Buffer) => (inflated.receivedEncodedLength += chunk.length))
  payload.on('error', (err) => inflated.destroy(err))
  payload.pipe(inflated)
  done(null, inflated)
}

/**
 * Failures as google.rpc.Status in the request's encoding; a request in neither goes on to
 * problem+json. A database away, slow or full, or the request timeout, is the 503 / 507 with
 * Retry-After the other routes answer (src/db/faults.ts): exporters retry a 503, never a 500.
 */
function sendStatus(thrown: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const encoding = encodingOf(request)
  if (encoding === undefined) throw thrown
  const fault = thrown instanceof AppError ? undefined : databaseFault(thrown)
  if (fault) request.log.warn({ code: thrown.code, cause: thrown.message }, fault.message)
  const err = fault ?? thrown
  const status = err instanceof AppError ? err.status : err.validation ? 400 : (err.statusCode ?? 500)
  if (err instanceof AppError && err.headers) void reply.headers(err.headers)
  let message = err.message
  // An AppError's message is meant for the caller (a 503 says why and when to retry); an unexpected failure's is not.
  if (status >= 500 && !(err instanceof AppError)) {
    request.log.error({ err }, 'OTLP export failed')
    message = 'An unexpected error occurred.'
  } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') message = `The body is larger than ${OTLP_BODY_LIMIT} bytes (after decompression): send smaller batches.`
  void reply.code(status)
  return encoding === 'binary' ? reply.type(PROTOBUF).send(Buffer.from(encodeStatus(message))) : reply.type(JSON_TYPE).send(JSON.stringify({ message }))
}

const tags = ['otlp']

const PartialSuccess = (signal: Signal) =>
  Type.Object(
    {
      partialSuccess: Type.Optional(
        Type.Object({
          [signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords']: Type.String({ description: 'int64, as OTLP/JSON writes it.' }),
          errorMessage: Type.String(),
        }),
      ),
    },
    { title: signal === 'traces' ? 'ExportTraceServiceResponse' : 'ExportLogsServiceResponse', description: 'Set only when something was rejected.' },
  )

const BINARY = { type: 'string', format: 'binary' } as const

const kv = (key: string, value: string | number) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } })
const CONVERSATION = 'conv_5f2a9c1e'
const TRACE = '5b8efff798038103d269b633813fc60c'

/** Request examples in OTLP/JSON: an agent's turn as GenAI spans, and Claude Code's log events for the same. */
const EXAMPLES: Record<Signal, Record<string, unknown>> = {
  traces: {
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', 'billing-agent')] },
        scopeSpans: [
          {
            scope: { name: 'billing-agent' },
            spans: [
              {
                traceId: TRACE,
                spanId: 'eee19b7ec3c1b174',
                parentSpanId: 'eee19b7ec3c1b173',
                name: 'chat gpt-4.1',
                kind: 3,
                startTimeUnixNano: '1764237600000000000',
                endTimeUnixNano: '1764237601200000000',
                attributes: [
                  kv('gen_ai.operation.name', 'chat'),
                  kv('gen_ai.conversation.id', CONVERSATION),
                  kv('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Refund invoice INV-1042 and email the customer a receipt' }] }])),
                  kv('gen_ai.usage.input_tokens', 812),
                  kv('gen_ai.usage.output_tokens', 64),
                ],
              },
              {
                traceId: TRACE,
                spanId: 'eee19b7ec3c1b175',
                parentSpanId: 'eee19b7ec3c1b173',
                name: 'execute_tool refund_invoice',
                kind: 1,
                startTimeUnixNano: '1764237601300000000',
                endTimeUnixNano: '1764237601900000000',
                attributes: [
                  kv('gen_ai.operation.name', 'execute_tool'),
                  kv('gen_ai.conversation.id', CONVERSATION),
                  kv('gen_ai.tool.name', 'refund_invoice'),
                  kv('gen_ai.tool.call.id', 'call_8f3k2'),
                  kv('gen_ai.tool.call.arguments', '{"invoice":"INV-1042"}'),
                  kv('gen_ai.tool.call.result', '{"refunded":true}'),
                ],
                status: {},
              },
            ],
          },
        ],
      },
    ],
  },
  logs: {
    resourceLogs: [
      {
        resource: { attributes: [kv('service.name', 'claude-code')] },
        scopeLogs: [
          {
            scope: { name: 'com.anthropic.claude_code.events' },
            logRecords: [
              {
                timeUnixNano: '1764237600000000000',
                body: { stringValue: 'claude_code.user_prompt' },
                attributes: [kv('session.id', 'c0d3c0d3-4b1d-4d0e-9a57-3c2b8f1e7d90'), kv('prompt', 'Make the flaky test in test/upload.test.ts pass reliably')],
              },
              {
                timeUnixNano: '1764237604000000000',
                body: { stringValue: 'claude_code.tool_result' },
                attributes: [
                  kv('session.id', 'c0d3c0d3-4b1d-4d0e-9a57-3c2b8f1e7d90'),
                  kv('tool_name', 'Bash'),
                  kv('tool_use_id', 'toolu_01A'),
                  kv('success', 'false'),
                  kv('error', 'Exit code 1'),
                  kv('tool_input', '{"command":"npx vitest run test/upload.test.ts"}'),
                ],
              },
            ],
          },
        ],
      },
    ],
  },
}

export const otlpRoutes: FastifyPluginAsyncTypebox<{ otlp: OtlpService }> = async (app, { otlp }) => {
  app.addContentTypeParser([PROTOBUF, 'application/protobuf'], { parseAs: 'buffer', bodyLimit: OTLP_BODY_LIMIT }, (_request, body, done) => done(null, body))
  app.setErrorHandler(sendStatus)
  app.addHook('onClose', () => otlp.close())

  const route = (signal: Signal, summary: string) =>
    app.post(
      `/otlp/v1/${signal}`,
      {
        bodyLimit: OTLP_BODY_LIMIT,
        // Shedding first: a turned-away export costs no reading, inflating or decoding.
        preParsing: [
          async (_request, _reply, payload) => {
            otlp.admit()
            return payload
          },
          gunzip,
        ],
        // The body schemas document the two encodings; the decoder is what checks a body (a 400 when it fails).
        validatorCompiler: () => () => true,
        config: { auth: 'agent' },
        schema: {
          operationId: signal === 'traces' ? 'sendOtlpTraces' : 'sendOtlpLogs',
          tags,
          summary,
          description:
            "OTLP/HTTP (binary protobuf or JSON, optionally gzip), authenticated with the agent key in `Authorization` (`OTEL_EXPORTER_OTLP_HEADERS`). Observes only: the verdicts go to webhooks, the dashboard and the session's steps. Failures are a `google.rpc.Status` in the request's encoding.",
          body: {
            content: {
              [PROTOBUF]: { schema: { ...BINARY, description: signal === 'traces' ? 'ExportTraceServiceRequest' : 'ExportLogsServiceRequest' } },
              [JSON_TYPE]: { schema: Type.Object({}, { additionalProperties: true, description: 'The same message in OTLP/JSON (hex trace and span ids).', examples: [EXAMPLES[signal]] }) },
            },
          },
          response: {
            200: { description: 'Accepted (partial_success counts what was not).', content: { [PROTOBUF]: { schema: BINARY }, [JSON_TYPE]: { schema: PartialSuccess(signal) } } },
            '4xx': { description: "google.rpc.Status, in the request's encoding.", content: { [PROTOBUF]: { schema: BINARY }, [JSON_TYPE]: { schema: Type.Object({ message: Type.String() }) } } },
            '5xx': { description: "google.rpc.Status, in the request's encoding.", content: { [PROTOBUF]: { schema: BINARY }, [JSON_TYPE]: { schema: Type.Object({ message: Type.String() }) } } },
          },
        },
      },
      async (request, reply) => {
        const encoding = encodingOf(request)
        if (encoding === undefined) throw new AppError(415, 'unsupported_media_type', `Send the body as ${PROTOBUF} or ${JSON_TYPE}.`)
        let message
        try {
          message = encoding === 'binary' ? decodeBinary(signal, request.body as Buffer) : fromJson(signal, request.body)
        } catch (err) {
          throw new AppError(400, 'bad_request', `The body is not an OTLP ${signal} export request: ${(err as Error).message}.`)
        }
        const result = await otlp.ingest(request.agentId, signal, message, request.uow)
        const answer = responseMessage(signal, result.rejected, result.reason)
        // Pre-encoded either way: the response schemas document the answer, they do not serialize it.
        const raw = reply as FastifyReply
        return encoding === 'binary' ? raw.type(PROTOBUF).send(Buffer.from(encodeResponse(signal, answer))) : raw.type(JSON_TYPE).send(responseJson(answer))
      },
    )

  route('traces', "OTLP spans (GenAI conventions): tool executions become steps of the conversation's session.")
  route('logs', "OTLP log events (Claude Code's, Codex CLI's): tool results become steps of the conversation's session.")
}
