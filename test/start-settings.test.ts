/**
 * `npm start` and the Docker image run the server with the same memory settings (docs/performance.md,
 * Memory): node's heap flags and the allocator's arena cap and mmap/trim thresholds; the README
 * names them. The image's test needs a Docker engine; this one reads the files, so a setting added
 * to one and not the others fails everywhere.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { startCommand, startEnvPairs } from '../bench/start-command.js'

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')
const { flags } = startCommand()
const env = startEnvPairs()
const dockerfile = read('Dockerfile')

describe('the server runs with the same settings under npm start, in the image and as the README says', () => {
  it('node flags', () => {
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[]
    expect(flags).toContain('--max-old-space-size=192')
    expect(cmd.filter((w) => w.startsWith('--'))).toEqual(flags)
  })

  it('environment', () => {
    expect(env).toContain('MALLOC_ARENA_MAX=2')
    // The runtime stage's ENV block: NAME=value pairs continued over lines.
    const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')))![1]!
    const image = block.split(/\s*\\\n\s*|\s+/).filter(Boolean)
    for (const pair of env) expect(image).toContain(pair)
  })

  it('the README names them for a process manager of its own', () => {
    const line = /^- Memory: .*(?:\n {2}.*)*/m.exec(read('README.md'))![0]
    for (const w of [...flags, ...env]) expect(line).toContain(w)
  })
})
