/**
 * The Docker image, built from the Dockerfile and run as a user would: Node.js 24, not root, healthy
 * by its own /readyz check, answering on a published loopback port, keeping its data in the /data
 * volume across a restart, stopping cleanly on SIGTERM. Needs a Docker engine; the machines CI runs
 * on have only the client, so there (as anywhere without one) the test skips with one line.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '..')
const run = promisify(execFile)
const docker = async (args: string[], timeout = 60_000) => (await run('docker', args, { cwd: ROOT, timeout, maxBuffer: 64 << 20 })).stdout.trim()

/** The engine's version, or why there is none (the test then skips). */
async function engine(): Promise<{ version?: string; why?: string }> {
  try {
    return { version: await docker(['version', '--format', '{{.Server.Version}}'], 20_000) }
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: string }
    return { why: e.code === 'ENOENT' ? 'no docker command' : (e.stderr?.trim().split('\n').at(-1) ?? e.message) }
  }
}
const found = await engine()
if (found.version === undefined) console.warn(`Docker image test skipped: no Docker engine answers (${found.why}); to run it, start one that can pull node:24-bookworm-slim`)

const tag = `goalkeeper-test:${randomBytes(4).toString('hex')}`
const container = `goalkeeper-test-${randomBytes(4).toString('hex')}`
const token = randomBytes(16).toString('hex')
afterAll(async () => {
  if (found.version === undefined) return
  await docker(['rm', '-f', '-v', container]).catch(() => undefined)
  await docker(['rmi', '-f', tag]).catch(() => undefined)
})

/** Polls `read` until it returns `want` (or a timeout fails the test, naming the last value). */
async function until(read: () => Promise<string>, want: string, ms: number): Promise<void> {
  const end = Date.now() + ms
  let last = ''
  while (Date.now() < end) {
    last = await read().catch((e: Error) => e.message)
    if (last === want) return
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`waited ${ms} ms for ${want}, last saw ${last}`)
}

describe.skipIf(found.version === undefined)('the Docker image', () => {
  it('runs Node.js 24 as a non-root user, turns healthy on /readyz, serves, keeps /data across a restart and stops with exit 0', { timeout: 900_000 }, async () => {
    await docker(['build', '-t', tag, '.'], 840_000)
    const image = JSON.parse(await docker(['image', 'inspect', tag]))[0].Config as { User: string; Healthcheck: { Test: string[] } }
    expect(image.User).toBe('node')
    expect(image.Healthcheck.Test.join(' ')).toContain('/readyz')

    // The image's own health check, polled each second instead of every 30 s.
    await docker(['run', '-d', '--name', container, '-p', '127.0.0.1::8080', '--health-interval', '1s', '-e', `GOALKEEPER_ADMIN_TOKEN=${token}`, tag])
    expect(await docker(['exec', container, 'node', '--version'])).toMatch(/^v24\./)
    expect(await docker(['exec', container, 'id', '-u'])).not.toBe('0')
    const health = () => docker(['inspect', '--format', '{{.State.Health.Status}}', container])
    await until(health, 'healthy', 60_000)

    const base = `http://${await docker(['port', container, '8080/tcp'])}`.split('\n')[0]!
    expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({ status: 'ready' })
    const agent = await fetch(`${base}/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"name":"docker"}' })
    expect(agent.status).toBe(201)
    const key = { authorization: `Bearer ${((await agent.json()) as { api_key: string }).api_key}` }
    const created = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body: '{"goal":"Ship the image"}' })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }

    // SIGTERM, then a new start on the same /data volume.
    await docker(['stop', '--time', '20', container])
    expect(await docker(['inspect', '--format', '{{.State.ExitCode}}', container])).toBe('0')
    await docker(['start', container])
    await until(health, 'healthy', 60_000)
    const again = `http://${await docker(['port', container, '8080/tcp'])}`.split('\n')[0]!
    expect(await (await fetch(`${again}/v1/sessions/${id}`, { headers: key })).json()).toMatchObject({ id, goal: 'Ship the image' })
  })
})
