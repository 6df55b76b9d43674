import type { FastifyInstance } from 'fastify'
import { invalidField } from './errors.js'

/**
 * The deepest a JSON body may nest arrays and objects. Past it a body is a 400 before it is
 * parsed: every walk after the parser (the text check, serialising) would otherwise spend a stack
 * frame a level, and a 25 KB body nested 4,100 deep overflowed the stack, a 500.
 */
export const MAX_BODY_DEPTH = 64

/** True when the JSON text nests arrays and objects deeper than `max`: one pass over its characters. */
export function nestsDeeper(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/**
 * Makes `app`'s JSON body parser Fastify's own behind the depth check. `poisoned` is what it does
 * with a `__proto__` or `constructor.prototype` key: refuse the body (the default) or drop the key.
 */
export function useDepthCheckedJson(app: FastifyInstance, poisoned: 'error' | 'remove' = 'error'): void {
  const parse = app.getDefaultJsonParser(poisoned, poisoned)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string // parseAs: 'string'
    if (nestsDeeper(text, MAX_BODY_DEPTH)) done(invalidField('body', `must not nest arrays and objects more than ${MAX_BODY_DEPTH} levels deep`), undefined)
    // Fastify's own parser answers through `done` and returns nothing (its type also allows a promise).
    else void parse(request, text, done)
  })
}
