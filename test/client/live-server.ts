/**
 * A real goalkeeper listening on 127.0.0.1 (an ephemeral port, a `:memory:` database) for the
 * client's tests, with an agent and a client for it; closed after each test by buildTestApp.
 */
import type { AddressInfo } from 'node:net'
import { Goalkeeper, type GoalkeeperOptions } from '@goalkeeper/client'
import { buildTestApp, type TestAgent, type TestApp, type TestAppOverrides } from '../helpers.js'

export const GOAL = 'Build a REST API for user management with JWT authentication'
export const PLAN = ['design the user schema', 'implement signup and login endpoints with JWT', 'write tests for the auth endpoints']

export interface LiveServer {
  t: TestApp
  agent: TestAgent
  baseUrl: string
  client: Goalkeeper
}

export async function liveServer(overrides: TestAppOverrides = {}, clientOptions: Partial<GoalkeeperOptions> = {}): Promise<LiveServer> {
  const t = await buildTestApp(overrides)
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  const agent = await t.createAgent()
  return { t, agent, baseUrl, client: new Goalkeeper({ baseUrl, apiKey: agent.apiKey, ...clientOptions }) }
}
