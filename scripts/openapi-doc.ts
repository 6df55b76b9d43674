import { stringify } from 'yaml'
import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { buildApp } from '../src/http/app.js'

/** The OpenAPI document the app serves at /openapi.json, from a throwaway app on an in-memory database. */
export async function servedOpenApi(): Promise<Record<string, unknown>> {
  const handle = openDb(':memory:')
  runMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_DB: ':memory:' }), handle, logger: false })
  try {
    await app.ready()
    return app.swagger() as unknown as Record<string, unknown>
  } finally {
    await app.close()
    handle.close()
  }
}

/**
 * The served document as YAML that YAML 1.1 and 1.2 parsers read alike: `compat` quotes every
 * string either would take for something else, such as `22:00` (the integer 1320 to PyYAML and
 * js-yaml 3), `on` (a 1.1 boolean) or `0o17` (a 1.2 integer). No anchors or aliases: each value is
 * spelled out where it is used, so the file reads (and diffs) line by line.
 */
export function toOpenApiYaml(doc: unknown): string {
  return stringify(doc, { compat: 'yaml-1.1', aliasDuplicateObjects: false })
}

export async function renderOpenApiYaml(): Promise<string> {
  return toOpenApiYaml(await servedOpenApi())
}
