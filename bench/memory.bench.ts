/**
 * Memory of the real server under a long run (`npm run bench:memory`): RSS of the server process
 * (a child running the freshly built `dist/server.js` as `npm start` does, on a fresh SQLite file,
 * rate limit off) before and after 100,000
 * `POST /v1/sessions/{id}/steps` spread round-robin over 1,000 sessions, driven through HTTP by
 * autocannon with 50 connections. Target: RSS after ≤ 150 MB. Also prints peak RSS, V8 heap
 * (from /metrics) and steps/s.
 *
 * Flags: --steps N (100000), --sessions N (1000), --connections N (50), --tsx (run src/ through tsx:
 * quicker to start, but its loader thread adds ~50 MB of RSS), --no-build (use the dist/ already built).
 */
import { loadavg } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildDist, startGoalkeeper, type ChildServer } from './child-server.js'
import { createFixture, flag, hasFlag, mb, runLoad, stepTextSource } from './load.js'

const steps = flag('steps', 100_000)
const sessionCount = flag('sessions', 1000)
const connections = flag('connections', 50)
const fromSource = hasFlag('tsx')
const TARGET_MB = 150

async function heapUsed(server: ChildServer): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text()
  const m = /^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text)
  return m ? Number(m[1]) : Number.NaN
}

async function snapshot(server: ChildServer, label: string): Promise<{ label: string; rss: number; heap: number }> {
  await sleep(500) // let in-flight work and timers settle
  return { label, rss: server.rss(), heap: await heapUsed(server) }
}

async function main(): Promise<void> {
  if (!fromSource && !hasFlag('no-build')) buildDist()
  console.log(
    `Memory bench: ${steps} steps over ${sessionCount} sessions, ${connections} connections; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  const server = await startGoalkeeper({ fromSource })
  try {
    const rows = [await snapshot(server, 'after start')]
    const fixture = await createFixture(server, sessionCount)
    rows.push(await snapshot(server, `after creating ${sessionCount} sessions`))

    const text = stepTextSource(3)
    let i = 0
    const result = await runLoad(
      server.baseUrl,
      {
        name: 'steps',
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.apiKey}` },
        next: () => ({ path: `/v1/sessions/${fixture.sessionIds[i % sessionCount]}/steps`, body: { description: text(), output: `ok ${i++}` } }),
      },
      { connections, amount: steps },
    )
    rows.push(await snapshot(server, `after ${result.requests} steps`))
    const peak = server.peakRss()

    console.log(
      `\nload average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    )
    console.table(rows.map((r) => ({ point: r.label, 'RSS MB': mb(r.rss), 'V8 heap used MB': mb(r.heap) })))
    const after = rows[rows.length - 1]!.rss
    console.log(
      `steps: ${result.requests} in ${result.seconds.toFixed(1)} s = ${result.rps.toFixed(0)} steps/s (p50 ${result.p50} ms, p99 ${result.p99} ms); ` +
        `peak RSS ${mb(peak)} MB; RSS after ${mb(after)} MB (target ≤ ${TARGET_MB} MB: ${after <= TARGET_MB * 1024 * 1024 ? 'yes' : 'NO'})`,
    )
    if (result.non2xx > 0 || result.errors > 0) {
      console.error(`FAIL: ${result.non2xx} non-2xx, ${result.errors} errors; status counts ${JSON.stringify(result.statusCounts)}; first: ${result.sample}`)
      process.exitCode = 1
    }
  } finally {
    await server.stop()
  }
}

await main()
