import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { renderOpenApiYaml } from '../../scripts/openapi-doc.js'

it('the committed openapi.yaml matches what the app serves (run `npm run openapi` after changing routes)', async () => {
  const committed = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')
  expect(committed).toBe(await renderOpenApiYaml())
})
