/**
 * The OTLP messages, from the official .proto files (resources/otlp: opentelemetry-proto v1.11.0
 * and googleapis' google/rpc/status.proto) through protobufjs: the binary encoding decoded and
 * encoded by protobufjs itself, the JSON encoding read with protobufjs's `fromObject` after the
 * OTLP deviations from proto3's JSON mapping are undone (trace and span ids are hex, not base64).
 * `fromObject` takes int64 values as numbers or decimal strings and enums as integers (names too).
 */
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'

const DIR = fileURLToPath(new URL('../../resources/otlp/', import.meta.url))

const root = new protobuf.Root()
// Imports name paths from the proto root; google/protobuf/* are protobufjs's bundled copies.
root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : DIR + target)
root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/logs/v1/logs_service.proto', 'google/rpc/status.proto'])

export type Signal = 'traces' | 'logs'

const REQUEST: Record<Signal, protobuf.Type> = {
  traces: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
  logs: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
}
const RESPONSE: Record<Signal, protobuf.Type> = {
  traces: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
  logs: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
}
const STATUS = root.lookupType('google.rpc.Status')

/** An int64 as protobufjs gives it: a number, or a Long (the `long` package) past 2^53 and for fixed64. */
export type Int64 = number | { toNumber(): number } | null | undefined

export interface AnyValue {
  /** Which member of the oneof is set (protobufjs's virtual oneof field). */
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue'
  stringValue?: string | null
  boolValue?: boolean | null
  intValue?: Int64
  doubleValue?: number | null
  arrayValue?: { values?: AnyValue[] | null } | null
  kvlistValue?: { values?: KeyValue[] | null } | null
  bytesValue?: Uint8Array | null
}
export interface KeyValue {
  key?: string | null
  value?: AnyValue | null
}
interface Resource {
  attributes?: KeyValue[] | null
}
export interface Span {
  traceId?: Uint8Array | null
  spanId?: Uint8Array | null
  parentSpanId?: Uint8Array | null
  name?: string | null
  startTimeUnixNano?: Int64
  attributes?: KeyValue[] | null
  status?: { code?: number | null; message?: string | null } | null
}
export interface LogRecord {
  timeUnixNano?: Int64
  observedTimeUnixNano?: Int64
  body?: AnyValue | null
  attributes?: KeyValue[] | null
  traceId?: Uint8Array | null
  spanId?: Uint8Array | null
  eventName?: string | null
}
export interface TracesRequest {
  resourceSpans?: { resource?: Resource | null; scopeSpans?: { spans?: Span[] | null }[] | null }[] | null
}
export interface LogsRequest {
  resourceLogs?: { resource?: Resource | null; scopeLogs?: { logRecords?: LogRecord[] | null }[] | null }[] | null
}
export type ExportRequest<S extends Signal> = S extends 'traces' ? TracesRequest : LogsRequest

/** A binary body as its request message; throws on bytes that are not one. */
export function decodeBinary<S extends Signal>(signal: S, body: Uint8Array): ExportRequest<S> {
  return REQUEST[signal].decode(body) as unknown as ExportRequest<S>
}

/** Where OTLP/JSON puts hex ids: `[container path, id fields]` per signal. */
const HEX_IDS: Record<Signal, { path: string[]; ids: string[]; links?: string }> = {
  traces: { path: ['resourceSpans', 'scopeSpans', 'spans'], ids: ['traceId', 'spanId', 'parentSpanId'], links: 'links' },
  logs: { path: ['resourceLogs', 'scopeLogs', 'logRecords'], ids: ['traceId', 'spanId'] },
}

class BadOtlpJson extends Error {}

/** A parsed OTLP/JSON body as its request message; throws (BadOtlpJson, or protobufjs's TypeError) on one that is not. */
export function fromJson<S extends Signal>(signal: S, body: unknown): ExportRequest<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadOtlpJson('the body is not a JSON object')
  const { path, ids, links } = HEX_IDS[signal]
  const items = (node: unknown, key: string): Record<string, unknown>[] => {
    const list = (node as Record<string, unknown>)[key]
    if (list === undefined || list === null) return []
    if (!Array.isArray(list)) throw new BadOtlpJson(`${key} must be an array`)
    return list.filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object')
  }
  const unhex = (o: Record<string, unknown>, fields: string[]) => {
    for (const f of fields) {
      const v = o[f]
      if (v === undefined || v === null) continue
      if (typeof v !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(v)) throw new BadOtlpJson(`${f} must be a hex string`)
      o[f] = Buffer.from(v, 'hex')
    }
  }
  for (const a of items(body, path[0]!)) {
    for (const b of items(a, path[1]!)) {
      for (const item of items(b, path[2]!)) {
        unhex(item, ids)
        if (links !== undefined) for (const link of items(item, links)) unhex(link, ['traceId', 'spanId'])
      }
    }
  }
  return REQUEST[signal].fromObject(body as Record<string, unknown>) as unknown as ExportRequest<S>
}

/** The export response: empty on full success, `partial_success` when something was rejected or there is a warning. */
export function responseMessage(signal: Signal, rejected: number, message: string): Record<string, unknown> {
  if (rejected === 0 && message === '') return {}
  return { partialSuccess: { [signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords']: rejected, errorMessage: message } }
}

export function encodeResponse(signal: Signal, message: Record<string, unknown>): Uint8Array {
  const type = RESPONSE[signal]
  return type.encode(type.fromObject(message)).finish()
}

/** A failure's body: google.rpc.Status (`code` left out, as the OTLP spec allows). */
export function encodeStatus(message: string): Uint8Array {
  return STATUS.encode(STATUS.fromObject({ message })).finish()
}

/** The response message in OTLP/JSON (int64 as a decimal string). */
export function responseJson(message: Record<string, unknown>): string {
  const p = message.partialSuccess as Record<string, unknown> | undefined
  if (p === undefined) return '{}'
  const [[field, count]] = Object.entries(p).filter(([k]) => k !== 'errorMessage') as [[string, number]]
  return JSON.stringify({ partialSuccess: { [field]: String(count), errorMessage: p.errorMessage } })
}

/** An OTLP/JSON request in the binary encoding (tests and the benchmark send both). */
export function encodeRequest(signal: Signal, json: unknown): Uint8Array {
  return REQUEST[signal].encode(fromJson(signal, structuredClone(json)) as unknown as protobuf.Message).finish()
}

/** Decodes a response (tests, and the benchmark's check of what was acknowledged). */
export function decodeResponse(signal: Signal, body: Uint8Array): Record<string, unknown> {
  const type = RESPONSE[signal]
  return type.toObject(type.decode(body), { longs: Number }) as Record<string, unknown>
}

export function decodeStatus(body: Uint8Array): { message?: string } {
  return STATUS.toObject(STATUS.decode(body)) as { message?: string }
}

/** An int64 as a number (nanosecond timestamps lose their last bits: milliseconds are what is kept). */
export function toNumber(v: Int64): number {
  if (v === null || v === undefined) return 0
  return typeof v === 'number' ? v : v.toNumber()
}
