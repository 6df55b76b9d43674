import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { buildApp } from '../src/http/app.js'

/** The OpenAPI document as YAML, from a throwaway app on an in-memory database. */
export async function renderOpenApiYaml(): Promise<string> {
  const handle = openDb(':memory:')
  runMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_DB: ':memory:' }), handle, logger: false })
  try {
    await app.ready()
    return app.swagger({ yaml: true })
  } finally {
    await app.close()
    handle.close()
  }
}
