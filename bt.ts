import { loadConfig } from './src/config.js'
import { openDb } from './src/db/client.js'
import { runMigrations } from './src/db/migrate.js'
import { buildApp } from './src/http/app.js'
for (let i = 0; i < 5; i++) {
  let t = performance.now()
  const h = openDb(':memory:'); runMigrations(h)
  const t1 = performance.now()
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_ADMIN_TOKEN: 'x'.repeat(20) }), handle: h, logger: false })
  const t2 = performance.now()
  await app.ready()
  const t3 = performance.now()
  await app.inject('/healthz')
  const t4 = performance.now()
  console.log(`migrate ${(t1-t).toFixed(1)} build ${(t2-t1).toFixed(1)} ready ${(t3-t2).toFixed(1)} first inject ${(t4-t3).toFixed(1)}`)
  await app.close()
}
