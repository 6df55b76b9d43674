#!/usr/bin/env node
/**
 * Builds the dashboard: ui/src/main.ts and its CSS bundled by esbuild into <outdir>/assets under
 * content-hashed names, index.html naming them, and .br/.gz copies of each text file (served by
 * @fastify/static's preCompressed). Usage: node ui/build.mjs [outdir], default dist/webui.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))
const outdir = resolve(process.argv[2] ?? join(here, '..', 'dist', 'webui'))

await rm(outdir, { recursive: true, force: true })
const result = await build({
  entryPoints: { app: join(here, 'src', 'main.ts') },
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['chrome111', 'firefox115', 'safari16.4'],
  outdir: join(outdir, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
})

const outputs = Object.keys(result.metafile.outputs).map((p) => resolve(p))
const asset = (ext) => {
  const file = outputs.find((p) => p.endsWith(ext))
  if (file === undefined) throw new Error(`the build wrote no ${ext} file`)
  return `/ui/assets/${basename(file)}`
}
const tags = [`<link rel="stylesheet" href="${asset('.css')}">`, `<script type="module" src="${asset('.js')}"></script>`].join('\n')
const html = (await readFile(join(here, 'index.html'), 'utf8')).replace('<!--assets-->', tags)
await mkdir(outdir, { recursive: true })
await writeFile(join(outdir, 'index.html'), html)

for (const file of [...outputs, join(outdir, 'index.html')]) {
  const bytes = await readFile(file)
  await writeFile(`${file}.gz`, gzipSync(bytes, { level: 9 }))
  await writeFile(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
}
