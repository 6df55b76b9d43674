// Writes openapi.yaml (repo root) from the app itself: run `npm run openapi` after changing routes.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderOpenApiYaml } from './openapi-doc.js'

const target = fileURLToPath(new URL('../openapi.yaml', import.meta.url))
writeFileSync(target, await renderOpenApiYaml())
console.log(`wrote ${target}`)
