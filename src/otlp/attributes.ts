/**
 * Reading OTLP attributes: a span's or log record's own over its resource's, each value as the
 * plain JS value it stands for. Every string comes out mended (text-mend.ts): telemetry carries
 * whatever a tool printed.
 */
import { MAX_BODY_DEPTH, nestsDeeper } from '../json-body.js'
import { mendString } from '../text-mend.js'
import { toNumber, type AnyValue, type KeyValue } from './proto.js'

export type Attrs = ReadonlyMap<string, AnyValue>

/** One map of several attribute lists, a later list's key over an earlier one's. */
export function attrs(...lists: (KeyValue[] | null | undefined)[]): Attrs {
  const out = new Map<string, AnyValue>()
  for (const list of lists) for (const kv of list ?? []) if (kv.key && kv.value) out.set(kv.key, kv.value)
  return out
}

/**
 * The plain value: a string, number, boolean, array or object (a kvlist); bytes as base64.
 * protobufjs names the member of the `value` oneof that is set (the others read as defaults).
 */
export function plain(v: AnyValue | null | undefined, depth = 0): unknown {
  switch (v?.value) {
    case 'stringValue':
      return mendString(v.stringValue ?? '')
    case 'boolValue':
      return v.boolValue === true
    case 'intValue':
      return toNumber(v.intValue)
    case 'doubleValue':
      return v.doubleValue ?? 0
    case 'bytesValue':
      return Buffer.from(v.bytesValue ?? []).toString('base64')
  }
  // Bounded like a JSON body (json-body.ts): attribute values nest, and nothing here spends a frame a level past it.
  if (v === null || v === undefined || depth >= 32) return undefined
  if (v.value === 'arrayValue') return (v.arrayValue?.values ?? []).map((x) => plain(x, depth + 1))
  if (v.value === 'kvlistValue') return Object.fromEntries((v.kvlistValue?.values ?? []).filter((kv) => kv.key).map((kv) => [mendString(kv.key!), plain(kv.value, depth + 1)]))
  return undefined
}

/** A non-empty string attribute (numbers and booleans as text), or undefined. */
export function text(a: Attrs, key: string): string | undefined {
  const v = plain(a.get(key))
  if (typeof v === 'string') return v === '' ? undefined : v
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
}

/** A count: a finite number ≥ 0 (a numeric string too: Claude Code and Codex send some counts as text), or undefined. */
export function count(a: Attrs, key: string): number | undefined {
  const v = plain(a.get(key))
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/**
 * A structured attribute: a kvlist or array as it is, a string parsed as JSON when it is JSON
 * nested no deeper than a JSON body may be (else the string).
 */
export function structured(a: Attrs, key: string): unknown {
  const v = plain(a.get(key))
  if (typeof v !== 'string') return v
  const t = v.trimStart()
  if ((!t.startsWith('{') && !t.startsWith('[')) || nestsDeeper(v, MAX_BODY_DEPTH)) return v
  try {
    return JSON.parse(v) as unknown
  } catch {
    return v
  }
}
