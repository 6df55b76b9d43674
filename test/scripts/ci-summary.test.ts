import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const summary = (folder: string) => execFileSync(process.execPath, ['.ci/summary.mjs', folder], { encoding: 'utf8' })

describe('.ci/summary.mjs (the closing lines of .ci/run)', () => {
  const folders: string[] = []
  const reports = (files: Record<string, unknown>) => {
    const folder = mkdtempSync(join(tmpdir(), 'gk-ci-summary-'))
    folders.push(folder)
    for (const [name, report] of Object.entries(files)) writeFileSync(join(folder, name), JSON.stringify(report))
    return folder
  }
  afterEach(() => {
    for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true })
  })

  it('names each failed test with its error before the counts, so the tail of a CI log says what failed', () => {
    const folder = reports({
      'node-20.20.2.json': {
        success: false,
        numTotalTests: 4,
        numPassedTests: 2,
        numFailedTests: 1,
        numPendingTests: 1,
        testResults: [
          {
            name: '/tmp/clone/test/http/steps.test.ts',
            status: 'failed',
            assertionResults: [
              { status: 'passed', fullName: 'steps answers' },
              { status: 'failed', fullName: 'steps keeps order', failureMessages: ['\u001b[31mAssertionError\u001b[39m: expected 2 to be 1\n\n    at steps.test.ts:10:3'] },
            ],
          },
          { name: '/tmp/clone/test/db/broken.test.ts', status: 'failed', message: 'Cannot find module x', assertionResults: [] },
        ],
      },
      'node-22.23.3.json': { success: true, numTotalTests: 3, numPassedTests: 3, testResults: [] },
    })
    const lines = summary(folder).trim().split('\n')
    expect(lines).toEqual([
      'FAILED on Node 20.20.2: test/http/steps.test.ts > steps keeps order',
      '    AssertionError: expected 2 to be 1',
      '        at steps.test.ts:10:3',
      'FAILED on Node 20.20.2: test/db/broken.test.ts (the file itself)',
      '    Cannot find module x',
      'Node 20.20.2: tests passed 2, failed 2, skipped 1',
      'Node 22.23.3: tests passed 3, failed 0, skipped 0',
      '5 passed, 2 failed, 1 skipped',
    ])
  })

  it('counts a report it cannot read as nothing, and a failed run with no failed test as one failure', () => {
    const folder = reports({ 'node-24.21.0.json': { success: false, numTotalTests: 1, numPassedTests: 1, testResults: [] } })
    writeFileSync(join(folder, 'node-22.23.3.json'), '{ truncated')
    expect(summary(folder).trim().split('\n')).toEqual(['Node 22.23.3: tests passed 0, failed 0, skipped 0', 'Node 24.21.0: tests passed 1, failed 1, skipped 0', '1 passed, 1 failed, 0 skipped'])
  })
})
