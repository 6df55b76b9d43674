/**
 * How `npm start` (package.json) runs node: the environment it sets (`env NAME=value`) and its
 * node flags. The benchmarks run the server with them, and the start-settings tests hold the image,
 * the README and the running server to them.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url))

export function startCommand(): { env: Record<string, string>; flags: string[] } {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { scripts: { start: string } }
  const words = pkg.scripts.start.split(/\s+/)
  const env: Record<string, string> = {}
  for (const w of words.filter((w) => /^[A-Z_]+=/.test(w))) env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1)
  return { env, flags: words.filter((w) => w.startsWith('--')) }
}

/** The start script's environment as `NAME=value` words. */
export function startEnvPairs(): string[] {
  return Object.entries(startCommand().env).map(([k, v]) => `${k}=${v}`)
}
