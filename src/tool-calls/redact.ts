/**
 * Secrets out of what goalkeeper stores of a coding agent. Its tool calls carry whatever it
 * touched: a `.env` it read, a token in a `curl` command, a connection string. Everything kept of
 * them (the prompt, tool arguments, tool output), from hooks or OTLP telemetry, passes through
 * `redact` first. The shapes are broad on
 * purpose (recall over precision: a redacted harmless value costs little, a stored key a lot),
 * and each keeps enough of its context (`Bearer `, `postgres://user:`, `API_KEY=`) for the step
 * to stay readable. A token library that verifies token formats (secretlint) finds fewer of these
 * shapes (no generic `PASSWORD=`, no bearer values) and is asynchronous on a path that must answer
 * in milliseconds.
 */

const REDACTED = '[REDACTED]'

/** Names whose values are secrets whatever they look like. */
const SECRET_NAME = String.raw`[A-Za-z0-9_.-]*(?:secret|passw(?:or)?d|pwd|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*`

/** [pattern, replacement]: applied in order, each to the whole text. */
const RULES: readonly [RegExp, string][] = [
  // PEM private keys, to their end marker (or the end of a cut text).
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g, `-----BEGIN $1PRIVATE KEY-----${REDACTED}`],
  // Credentials in URLs: scheme://user:password@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@"'`]+):[^\s/@"'`]+@/gi, `$1:${REDACTED}@`],
  // Authorization headers and bare bearer / basic credentials.
  [/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1$2${REDACTED}`],
  // Tokens recognisable by their prefix: OpenAI / Anthropic, GitHub, GitLab, Slack, AWS, Google,
  // npm, Hugging Face, Stripe, JWTs, and goalkeeper's own keys and webhook secrets.
  [
    /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|(?:sk|rk)_live_[0-9A-Za-z]{16,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}|gk_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=]{16,})/g,
    REDACTED,
  ],
  // JSON members with a secret's name: "api_key": "…".
  [new RegExp(String.raw`("${SECRET_NAME}"\s*:\s*")[^"\\]{3,}(")`, 'gi'), `$1${REDACTED}$2`],
  // Assignments and flags with a secret's name: API_KEY=…, password: …, --token … (not a count: max_tokens: 1000).
  [new RegExp(String.raw`\b(${SECRET_NAME})(\s*[=:]\s*)(["']?)(?![0-9]+\b)[^\s"'\`,;]{3,}\3`, 'gi'), `$1$2$3${REDACTED}$3`],
  [new RegExp(String.raw`(\s--?${SECRET_NAME})(\s+)(["']?)(?![0-9]+\b)[^\s"'\`,;-][^\s"'\`,;]{2,}\3`, 'gi'), `$1$2$3${REDACTED}$3`],
]

/** `text` with every secret shape replaced by [REDACTED]. */
export function redact(text: string): string {
  let out = text
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement)
  return out
}

const SECRET_KEY = new RegExp(`^${SECRET_NAME}$`, 'i')

/** A JSON value with every string redacted, and the values of secret-named keys replaced whole. */
export function redactJson(value: unknown): unknown {
  if (typeof value === 'string') return redact(value)
  if (Array.isArray(value)) return value.map(redactJson)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) && (typeof v === 'string' || typeof v === 'number') ? REDACTED : redactJson(v)
    return out
  }
  return value
}
