/**
 * The client package's figures (`npm run bench:client`):
 *
 * 1. Bundle size: client/src/index.ts bundled with its dependencies (openapi-fetch, standardwebhooks)
 *    by esbuild, minified, then gzipped; each adapter likewise, with its framework left external.
 * 2. Overhead per `sessions.step` against raw `fetch` on the same server: one goalkeeper child
 *    process on 127.0.0.1 (as `npm start` runs it, or src/ with --tsx), sequential calls from this
 *    process, raw and client rounds interleaved so machine drift lands on both. Raw calls send what
 *    the client sends (JSON body, bearer key, Idempotency-Key). Reported: mean and median latency,
 *    this process's CPU per call, and client/raw ratios (the issue's bar: within 10%).
 *
 * Flags: --size-only, --rounds N (default 10), --calls N per round and side (200), --tsx, --no-build.
 */
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { Goalkeeper } from '@goalkeeper/client'
import { buildDist, startGoalkeeper } from './child-server.js'
import { createFixture, flag, hasFlag, stepTextSource } from './load.js'

async function bundleSize(entry: string, external: string[] = []): Promise<{ min: number; gz: number }> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    external,
    write: false,
    logLevel: 'silent',
  })
  const code = out.outputFiles[0]!.contents
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`

async function sizes(): Promise<void> {
  const rows: [string, string, string[]][] = [
    ['@goalkeeper/client', 'client/src/index.ts', []],
    ['@goalkeeper/client/ai', 'client/src/adapters/ai-sdk.ts', ['ai', 'openapi-fetch', 'standardwebhooks']],
    ['@goalkeeper/client/openai-agents', 'client/src/adapters/openai-agents.ts', ['@openai/agents', 'openapi-fetch', 'standardwebhooks']],
  ]
  console.log('bundle (esbuild, minified, gzip -9)')
  for (const [name, entry, external] of rows) {
    const { min, gz } = await bundleSize(entry, external)
    console.log(`  ${name.padEnd(34)} ${kb(min).padStart(10)} min  ${kb(gz).padStart(9)} gzipped${external.length ? `  (external: ${external.join(', ')})` : ''}`)
  }
}

interface Side {
  ms: number[]
  cpuUs: number
  calls: number
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

async function overhead(): Promise<void> {
  const rounds = flag('rounds', 10)
  const calls = flag('calls', 200)
  const fromSource = hasFlag('tsx')
  if (!fromSource && !hasFlag('no-build')) buildDist()
  const server = await startGoalkeeper({ fromSource })
  try {
    const fixture = await createFixture(server, 8)
    const client = new Goalkeeper({ baseUrl: server.baseUrl, apiKey: fixture.apiKey })
    const text = stepTextSource(7)
    let n = 0
    const sessionFor = () => fixture.sessionIds[n++ % fixture.sessionIds.length]!

    const raw = async () => {
      const res = await fetch(`${server.baseUrl}/v1/sessions/${sessionFor()}/steps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ description: text() }),
      })
      if (res.status !== 201) throw new Error(`raw step → ${res.status}`)
      await res.json()
    }
    const viaClient = async () => {
      await client.sessions.step(sessionFor(), { description: text() })
    }

    const sides: Record<'raw' | 'client', Side> = { raw: { ms: [], cpuUs: 0, calls: 0 }, client: { ms: [], cpuUs: 0, calls: 0 } }
    const run = async (side: Side, fn: () => Promise<void>) => {
      const cpu = process.cpuUsage()
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now()
        await fn()
        side.ms.push(performance.now() - t0)
      }
      const used = process.cpuUsage(cpu)
      side.cpuUs += used.user + used.system
      side.calls += calls
    }
    // Warm-up (JIT, connection pool) on both paths, not counted.
    for (let i = 0; i < 50; i++) await raw()
    for (let i = 0; i < 50; i++) await viaClient()
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first, so neither always follows the other.
      if (r % 2 === 0) {
        await run(sides.raw, raw)
        await run(sides.client, viaClient)
      } else {
        await run(sides.client, viaClient)
        await run(sides.raw, raw)
      }
    }

    console.log(`\nsessions.step vs raw fetch (${rounds} rounds × ${calls} sequential calls each, ${fromSource ? 'src via tsx' : 'dist'})`)
    for (const [name, s] of Object.entries(sides)) {
      console.log(
        `  ${name.padEnd(7)} mean ${(mean(s.ms) * 1000).toFixed(0).padStart(6)} µs  median ${(median(s.ms) * 1000).toFixed(0).padStart(6)} µs  client-process CPU ${(s.cpuUs / s.calls).toFixed(0).padStart(5)} µs/call`,
      )
    }
    const ratio = (f: (s: Side) => number) => (f(sides.client) / f(sides.raw)).toFixed(3)
    console.log(`  client/raw: mean ${ratio((s) => mean(s.ms))}×, median ${ratio((s) => median(s.ms))}×, client-process CPU ${ratio((s) => s.cpuUs / s.calls)}× (bar: mean within 1.10×)`)
  } finally {
    await server.stop()
  }
}

await sizes()
if (!hasFlag('size-only')) await overhead()
