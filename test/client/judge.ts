/**
 * A stand-in OpenAI-compatible LLM judge on 127.0.0.1 for sessions with `llm_verify`: it scores a
 * step about pizza 0.1 and anything else 0.9. With the heuristic unsure (one goal word), the
 * blended alignment of a pizza step is 0.7 × 0.1 + 0.3 × 0.575 < 0.3 while drift stays below
 * 0.3: the verdict is `abort`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Judge {
  url: string
  close(): Promise<void>
}

export async function startJudge(): Promise<Judge> {
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c))
    req.on('end', () => {
      const score = /pizza/i.test(raw) ? 0.1 : 0.9
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify({ score, reasoning: 'stand-in judge' }) } }] }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Server environment for a goalkeeper that asks the judge. */
export const judgeEnv = (judge: Judge) => ({ GOALKEEPER_LLM_URL: judge.url, GOALKEEPER_LLM_MODEL: 'stand-in', GOALKEEPER_LLM_TIMEOUT_MS: '2000' })
