/** What identifies a step for loop detection: its call as canonical text, a text key, the tracker's state hash. */
import type { StepTool } from '../drift/code-entities.js'
import { stateHash } from '../drift/step-alignment.js'

/** `name({...})` with sorted keys, so the same call is the same text however its args were ordered. */
export function toolCallText(tool: StepTool): string {
  return `${tool.name}(${canonicalJson(tool.args)})`
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/**
 * `prefix`, then a 64-bit hash (two 32-bit halves in base 36) of the lowercased,
 * whitespace-collapsed, trimmed text: exact equality, unlike the word-set state hash. One pass over
 * the characters: a regex and toLowerCase per step cost ~20 µs on a 500-character output, this ~1 µs.
 */
export function textKey(text: string, prefix = ''): string {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  let pendingSpace = false
  let started = false
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i)
    if (c === 32 || (c >= 9 && c <= 13)) {
      pendingSpace = started
      continue
    }
    if (pendingSpace) {
      h1 = Math.imul(h1 ^ 32, 2654435761)
      h2 = Math.imul(h2 ^ 32, 1597334677)
      pendingSpace = false
    }
    started = true
    if (c >= 65 && c <= 90) c += 32
    else if (c > 127) c = text[i]!.toLowerCase().charCodeAt(0)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return flatKey(prefix, h2 >>> 0, h1 >>> 0)
}

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz'
const keyCodes: number[] = []

function pushBase36(n: number): void {
  const from = keyCodes.length
  do {
    keyCodes.push(BASE36.charCodeAt(n % 36))
    n = Math.floor(n / 36)
  } while (n > 0)
  for (let i = from, j = keyCodes.length - 1; i < j; i++, j--) [keyCodes[i], keyCodes[j]] = [keyCodes[j]!, keyCodes[i]!]
}

/**
 * `prefix` and both halves in base 36, the text snapshots store, as one flat string: joined with
 * `+`, a key is a chain of three or four string objects (~110 bytes instead of ~32), and a
 * session's loop window keeps 20 steps of them.
 */
function flatKey(prefix: string, high: number, low: number): string {
  keyCodes.length = 0
  for (let i = 0; i < prefix.length; i++) keyCodes.push(prefix.charCodeAt(i))
  pushBase36(high)
  pushBase36(low)
  return String.fromCharCode(...keyCodes)
}

/** The text the tracker's state hash reads for a step: a tool call counts as part of what was done. */
export function stepStateHash(description: string, output: string, tool?: StepTool): string {
  return stateHash(tool === undefined ? description : `${description}\n${toolCallText(tool)}`, output)
}
