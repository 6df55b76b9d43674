import { execFileSync } from 'node:child_process'

/**
 * Runs `script` (an ES module; `gc()` available) in a Node.js process of its own and returns the
 * number it prints: heap measured there is not shared with the test runner's other work.
 */
export function measuredInOwnProcess(script: string): number {
  return Number(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }))
}
