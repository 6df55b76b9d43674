/**
 * The MCP Inspector's command-line client against /mcp, as a user points it at goalkeeper: its
 * current release needs Node.js ≥ 22.19, so it runs under the newest LTS line's Node.js from the
 * test cache (test/node-lines/lines.ts), whatever Node.js runs the suite.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { NEWEST_LTS, nodeBinary } from '../node-lines/lines.js'
import { installPackage } from '../npm-cache.js'
import { connect, listen } from './client.js'

const INSPECTOR = { pkg: '@modelcontextprotocol/inspector', version: '2.12.0' }
const HOW_TO_ENABLE = `to run them, let npm reach the npm registry for node-${process.platform}-${process.arch}@${NEWEST_LTS} and ${INSPECTOR.pkg}@${INSPECTOR.version} (installed into ~/.cache/goalkeeper-test; GOALKEEPER_TEST_CACHE moves it)`

/** The Node.js binary and the CLI's entry, or undefined (the tests skip) when they cannot be installed. */
async function inspectorOrSkip(): Promise<{ node: string; cli: string } | undefined> {
  try {
    const node = await nodeBinary(NEWEST_LTS)
    const home = await installPackage('mcp-inspector', INSPECTOR.pkg, INSPECTOR.version, node)
    return { node, cli: join(home, 'node_modules', INSPECTOR.pkg, 'clients', 'launcher', 'build', 'index.js') }
  } catch (err) {
    const why = String((err as Error).message).split('\n')[0]
    if (process.env.CI === 'true') throw new Error(`CI=true but the MCP Inspector could not be installed: ${why}`)
    console.warn(`MCP Inspector tests skipped: ${HOW_TO_ENABLE} (${why})`)
    return undefined
  }
}
const inspector = await inspectorOrSkip()

// The Inspector keeps a catalog and secrets under ~/.mcp-inspector: a home of its own.
const home = mkdtempSync(join(tmpdir(), 'gk-inspector-'))
afterAll(() => rmSync(home, { recursive: true, force: true }))

/** `mcp-inspector --cli <url> …args` with JSON output; never prompts for an OAuth login. */
function inspect(url: URL, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = [inspector!.cli, '--cli', url.href, '--transport', 'http', '--format', 'json', '--stored-auth-only', ...args]
  return new Promise((resolve) =>
    execFile(inspector!.node, argv, { env: { ...process.env, HOME: home }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )
}

describe.skipIf(inspector === undefined)(`the MCP Inspector ${INSPECTOR.version} CLI on Node.js ${NEWEST_LTS}`, () => {
  it('lists the tools and calls one with the API key in --header; the session is that agent’s', async () => {
    const t = await buildTestApp()
    const url = await listen(t)
    const a = await t.createAgent('a')
    const b = await t.createAgent('b')
    const key = ['--header', `Authorization: Bearer ${a.apiKey}`]

    const listed = await inspect(url, ['--method', 'tools/list', ...key])
    expect(listed.code, listed.stderr).toBe(0)
    const { tools } = JSON.parse(listed.stdout).result as { tools: { name: string; inputSchema: { type: string } }[] }
    const { tools: sdkTools } = await (await connect(url, a.headers)).listTools()
    expect(tools.map((x) => x.name)).toEqual(sdkTools.map((x) => x.name))
    expect(tools.map((x) => x.name)).toContain('start_goal_session')
    for (const x of tools) expect(x.inputSchema.type, x.name).toBe('object')

    const args = { goal: 'Ship the release', plan: ['Write the changelog', 'Tag the release'] }
    const called = await inspect(url, ['--method', 'tools/call', '--tool-name', 'start_goal_session', '--tool-args-json', JSON.stringify(args), ...key])
    expect(called.code, called.stderr).toBe(0)
    const { result } = JSON.parse(called.stdout) as { result: { isError?: boolean; structuredContent: { id: string; goal: string; plan: string[] } } }
    expect(result.isError ?? false).toBe(false)
    expect(result.structuredContent).toMatchObject({ ...args, status: 'active' })
    const path = `/v1/sessions/${result.structuredContent.id}`
    expect((await t.app.inject({ url: path, headers: a.headers })).json()).toMatchObject(args)
    expect((await t.app.inject({ url: path, headers: b.headers })).statusCode).toBe(404)
  })

  it('without a key, or with a wrong one, stops at the 401 and calls nothing', async () => {
    const t = await buildTestApp()
    const url = await listen(t)
    await t.createAgent('a')
    for (const header of [[], ['--header', 'Authorization: Bearer gk_not_a_key']]) {
      const run = await inspect(url, ['--method', 'tools/call', '--tool-name', 'start_goal_session', '--tool-args-json', '{"goal":"x"}', ...header])
      expect(run.code, run.stdout).not.toBe(0)
      expect(`${run.stdout}${run.stderr}`).toMatch(/auth_required[^]*urn:problem:unauthorized/)
    }
    expect(Number((await t.db.get<{ n: number | string }>('SELECT count(*) AS n FROM sessions'))!.n)).toBe(0)
  })
})
