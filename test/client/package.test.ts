/**
 * The client package stands on its own: its generated types match openapi.yaml, and its code
 * reaches nothing outside client/src but its declared dependencies (no server code, no native
 * addon, no Fastify).
 */
import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { GENERATED, generateTypes } from '../../client/scripts/generate-types.js'

const pkg = JSON.parse(readFileSync(new URL('../../client/package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>
  peerDependencies: Record<string, string>
  exports: Record<string, { 'goalkeeper-source': string }>
}

describe('@goalkeeper/client', () => {
  it('has generated types equal to what openapi.yaml produces (else run `npm run client:types`)', async () => {
    const fresh = await generateTypes()
    expect(readFileSync(GENERATED, 'utf8') === fresh, 'client/src/generated/openapi.ts is stale: run `npm run client:types`').toBe(true)
  })

  it('imports only its own files, node builtins and its declared dependencies', async () => {
    const entryPoints = Object.values(pkg.exports).map((e) => new URL(`../../client/${e['goalkeeper-source']}`, import.meta.url).pathname)
    const result = await build({ entryPoints, bundle: true, write: false, outdir: 'out', platform: 'node', format: 'esm', packages: 'external', metafile: true, logLevel: 'silent' })
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.length).toBeGreaterThan(5)
    for (const input of inputs) expect(input).toMatch(/^client\/src\//)
    const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)])
    const externals = new Set(Object.values(result.metafile.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)))
    for (const name of externals) {
      const bare = name.startsWith('node:') || builtinModules.includes(name)
      const root = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!
      expect(bare || allowed.has(root), `${name} is not a declared dependency of the client`).toBe(true)
    }
    expect(externals).toContain('openapi-fetch')
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks'])
  })
})
