/**
 * Step verification by an OpenAI-compatible chat-completions endpoint (GOALKEEPER_LLM_*). The
 * engine decides when to ask and blends the score; this only sends the prompt and returns the
 * answer text. Any failure throws, and the engine then keeps the heuristic: a slow or broken
 * LLM never fails a step.
 */
import type { Dispatcher } from 'undici'
import type { LlmConfig } from '../config.js'
import type { LlmVerifyFn } from '../engine/session/llm-verify.js'
import { providerPost } from './provider-http.js'

const MAX_ANSWER_BYTES = 64 * 1024

/** `GOALKEEPER_LLM_URL` may be a base URL (`…/v1`) or the full `…/chat/completions` endpoint. */
function completionsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '')
  return trimmed.endsWith('/chat/completions') ? trimmed : `${trimmed}/chat/completions`
}

/** A verification answers a score and one sentence; a second opinion needs room for its analysis. */
const VERIFY_MAX_TOKENS = 150
export const OPINION_MAX_TOKENS = 400

export function createLlmVerify(config: LlmConfig, maxTokens = VERIFY_MAX_TOKENS, dispatcher?: Dispatcher): LlmVerifyFn {
  const post = providerPost({
    url: completionsUrl(config.url),
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
    maxAnswerBytes: MAX_ANSWER_BYTES,
    label: 'LLM',
    dispatcher,
  })
  return async (prompt: string): Promise<string> => {
    const json = await post({ model: config.model, messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: maxTokens })
    const content = (json as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content
    if (typeof content !== 'string') throw new Error('LLM answer has no choices[0].message.content')
    return content
  }
}
