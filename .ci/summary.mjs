// The closing lines of .ci/run from the vitest JSON reports in a folder (node-<version>.json, one per
// Node.js line): each failed test with the first lines of its error (the log's tail is often all a
// reader of CI sees), a line per report, then one plain total.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'

const folder = process.argv[2]
const total = { passed: 0, failed: 0, skipped: 0 }
const lines = []
const firstLines = (text, n = 6) =>
  stripVTControlCharacters(String(text ?? ''))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, n)
    .map((l) => `    ${l.trimEnd().slice(0, 300)}`)
for (const file of readdirSync(folder)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  let r = {}
  try {
    r = JSON.parse(readFileSync(join(folder, file), 'utf8'))
  } catch {
    // Unreadable: counted as nothing (the run that should have written it failed, and so does .ci/run).
  }
  // A file that fails before its tests run (an import error, a failing hook) counts as one failure.
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length
  const passed = r.numPassedTests ?? 0,
    skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
  // Tests that never ran (their worker crashed) count as failed; so does a run that failed outside any test.
  const notRun = Math.max(0, (r.numTotalTests ?? 0) - passed - skipped - (r.numFailedTests ?? 0))
  let failed = (r.numFailedTests ?? 0) + brokenFiles + notRun
  if (r.success === false && failed === 0) failed = 1
  const line = file.replace(/^node-(.*)\.json$/, 'Node $1')
  for (const f of r.testResults ?? []) {
    const where = String(f.name ?? '').replace(/^.*?\/(?=test\/)/, '')
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === 'failed')
    for (const a of failedTests) console.log(`FAILED on ${line}: ${where} > ${a.fullName}\n${firstLines(a.failureMessages?.join('\n')).join('\n')}`)
    if (f.status === 'failed' && failedTests.length === 0) console.log(`FAILED on ${line}: ${where} (the file itself)\n${firstLines(f.message).join('\n')}`)
  }
  total.passed += passed
  total.failed += failed
  total.skipped += skipped
  lines.push(`${line}: tests passed ${passed}, failed ${failed}, skipped ${skipped}`)
}
for (const l of lines) console.log(l)
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`)
