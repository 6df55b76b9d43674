import type { AddressInfo } from 'node:net'
import { context, trace, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { OTLPLogExporter as OTLPLogExporterJson } from '@opentelemetry/exporter-logs-otlp-http'
import { OTLPLogExporter as OTLPLogExporterProto } from '@opentelemetry/exporter-logs-otlp-proto'
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { stored } from './otlp-fixtures.js'

/**
 * The OpenTelemetry JS SDK's own OTLP exporters (protobuf and JSON, gzip or not) sending to
 * goalkeeper on 127.0.0.1: GenAI spans the way an instrumented agent emits them (an invoke_agent
 * span ending after its chat and execute_tool spans), and Codex CLI's log events; each asserted
 * on the steps goalkeeper stored.
 */

const GOAL = 'Find the cheapest flight from Lyon to Oslo next Friday and hold a seat'

async function setUp() {
  const t = await buildTestApp()
  const agent = await t.createAgent()
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/otlp/v1`
  return { t, agent, base, headers: { authorization: `Bearer ${agent.apiKey}` } }
}

/** One agent turn: invoke_agent around chat → execute_tool → chat → execute_tool (failing) → chat → execute_tool. */
function agentTurn(tracer: Tracer, conversation: string): void {
  const root = tracer.startSpan('invoke_agent travel-agent', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'travel-agent', 'gen_ai.conversation.id': conversation } })
  const ctx = trace.setSpan(context.active(), root)
  const input = [
    { role: 'system', parts: [{ type: 'text', content: 'You book travel.' }] },
    { role: 'user', parts: [{ type: 'text', content: GOAL }] },
  ]
  const chat = (tokens: number) => {
    const span = tracer.startSpan(
      'chat gpt-4.1',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.conversation.id': conversation,
          'gen_ai.input.messages': JSON.stringify(input),
          'gen_ai.usage.input_tokens': tokens,
          'gen_ai.usage.output_tokens': 40,
        },
      },
      ctx,
    )
    span.end()
  }
  const tool = (name: string, args: object, result: string, failed = false) => {
    const span = tracer.startSpan(
      `execute_tool ${name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.conversation.id': conversation,
          'gen_ai.tool.name': name,
          'gen_ai.tool.call.arguments': JSON.stringify(args),
          'gen_ai.tool.call.result': result,
        },
      },
      ctx,
    )
    if (failed) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: result })
      span.setAttribute('error.type', 'TimeoutError')
    }
    span.end()
  }
  chat(600)
  tool('search_flights', { from: 'LYS', to: 'OSL', date: '2026-12-04' }, '[{"flight":"SK4712","price":142}]')
  chat(700)
  tool('hold_seat', { flight: 'SK4712' }, 'timeout after 10 s', true)
  chat(800)
  tool('hold_seat', { flight: 'SK4712', retry: true }, '{"held":true,"seat":"14C"}')
  root.end()
}

describe('OpenTelemetry JS SDK exporters', () => {
  it.each([
    ['protobuf, gzip', (url: string, headers: Record<string, string>) => new OTLPTraceExporterProto({ url, headers, compression: 'gzip' as never })],
    ['JSON', (url: string, headers: Record<string, string>) => new OTLPTraceExporterJson({ url, headers })],
  ])('spans over OTLP/HTTP %s become the steps of the conversation', async (_, exporter) => {
    const { t, agent, base, headers } = await setUp()
    const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'travel-agent' }), spanProcessors: [new BatchSpanProcessor(exporter(`${base}/traces`, headers))] })
    agentTurn(provider.getTracer('travel-agent'), 'trip-42')
    await provider.forceFlush()
    await provider.shutdown()

    const { session, steps } = await stored(t, agent, 'trip-42')
    expect(session).toMatchObject({ goal: GOAL, metadata: { source: 'otlp', service: 'travel-agent' } })
    expect(steps.map((s) => [s.description, s.error, s.tokens])).toEqual([
      ['search_flights LYS', false, 640],
      ['hold_seat SK4712', true, 740],
      ['hold_seat SK4712', false, 840],
    ])
    expect(steps[0]!.tool).toEqual({ name: 'search_flights', args: { from: 'LYS', to: 'OSL', date: '2026-12-04' } })
    expect(steps[1]!.output).toBe('timeout after 10 s')
    expect(steps[2]!.output).toBe('{"held":true,"seat":"14C"}')
  })

  it.each([
    ['protobuf', (url: string, headers: Record<string, string>) => new OTLPLogExporterProto({ url, headers })],
    ['JSON, gzip', (url: string, headers: Record<string, string>) => new OTLPLogExporterJson({ url, headers, compression: 'gzip' as never })],
  ])('log events over OTLP/HTTP %s, shaped as Codex CLI sends them, become steps', async (_, exporter) => {
    const { t, agent, base, headers } = await setUp()
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'codex_exec' }),
      processors: [new BatchLogRecordProcessor({ exporter: exporter(`${base}/logs`, headers) })],
    })
    const logger = provider.getLogger('codex_otel')
    const conversation = '019a4b2c-7d1e-7f30-9c44-1b2e3d4f5a60'
    const emit = (attributes: Record<string, string>) => logger.emit({ severityNumber: SeverityNumber.INFO, attributes: { 'conversation.id': conversation, ...attributes } })
    emit({ 'event.name': 'codex.user_prompt', prompt: 'Make the CSV export stream rows', prompt_length: '31' })
    emit({ 'event.name': 'codex.sse_event', 'event.kind': 'response.completed', input_token_count: '900', output_token_count: '30' })
    emit({
      'event.name': 'codex.tool_result',
      tool_name: 'exec_command',
      call_id: 'call_1',
      arguments: '{"cmd":"npm test"}',
      success: 'true',
      output: 'Process exited with code 1\nOutput:\n1 failing',
    })
    emit({ 'event.name': 'codex.tool_result', tool_name: 'exec_command', call_id: 'call_2', arguments: '{"cmd":"git status"}', success: 'true', output: 'Process exited with code 0\nOutput:\nclean' })
    await provider.shutdown()

    const { session, steps } = await stored(t, agent, conversation)
    expect(session?.goal).toBe('Make the CSV export stream rows')
    expect(steps.map((s) => [s.description, s.error, s.tokens])).toEqual([
      ['exec_command: npm test', true, 930],
      ['exec_command: git status', false, undefined],
    ])
  })
})
