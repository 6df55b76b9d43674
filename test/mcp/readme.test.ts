import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { TOOLS } from '../../src/mcp/tools.js'
import { fencedBlocks } from '../readme-blocks.js'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const sectionOf = (text: string, heading: string) => text.slice(text.indexOf(heading), text.indexOf('\n## ', text.indexOf(heading) + 1))
const section = sectionOf(read('README.md'), '## MCP clients')
const reference = sectionOf(read('docs/reference.md'), '## MCP')

it("the README's MCP section has a config that parses, and the reference lists every tool, in order, with its own arguments", () => {
  const json = fencedBlocks(section).filter((b) => b.lang === 'json')
  expect(json).toHaveLength(1)
  const config = JSON.parse(json[0]!.code) as { mcpServers: Record<string, { url: string; headers: Record<string, string> }> }
  expect(config.mcpServers.goalkeeper).toMatchObject({ url: 'http://127.0.0.1:8080/mcp', headers: { Authorization: expect.stringMatching(/^Bearer gk_/) } })
  const bullets = [...reference.matchAll(/^- `(\w+)` \(([^)]*)\)/gm)]
  expect(bullets.map((m) => m[1])).toEqual(TOOLS.map((t) => t.definition.name))
  // The arguments a bullet names are the tool's.
  for (const [, name, args] of bullets) {
    const properties = Object.keys(TOOLS.find((t) => t.definition.name === name)!.definition.inputSchema.properties ?? {})
    for (const [, arg] of args!.matchAll(/`(\w+)`/g)) expect(properties, `${name} ${arg}`).toContain(arg)
  }
})
