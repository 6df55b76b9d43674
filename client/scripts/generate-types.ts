/**
 * The client's types, generated from the service's openapi.yaml with openapi-typescript.
 * `npm run client:types` (top level) rewrites src/generated/openapi.ts; the tests compare the
 * checked-in file with a fresh generation, so a changed openapi.yaml fails them until rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

export const SPEC = new URL('../../openapi.yaml', import.meta.url)
export const GENERATED = new URL('../src/generated/openapi.ts', import.meta.url)

export async function generateTypes(spec: URL = SPEC): Promise<string> {
  return COMMENT_HEADER + astToString(await openapiTS(readFileSync(spec, 'utf8')))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(GENERATED, await generateTypes())
  console.log(`wrote ${fileURLToPath(GENERATED)}`)
}
