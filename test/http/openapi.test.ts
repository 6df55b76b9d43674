import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { renderOpenApiYaml } from '../../scripts/openapi-doc.js'
import { buildTestApp } from '../helpers.js'

it('the committed openapi.yaml matches what the app serves (run `npm run openapi` after changing routes)', async () => {
  const committed = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')
  expect(committed).toBe(await renderOpenApiYaml())
})

it('info.version is the package version', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  const { app } = await buildTestApp()
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  expect(res.json()).toMatchObject({ info: { title: 'goalkeeper', version } })
})
