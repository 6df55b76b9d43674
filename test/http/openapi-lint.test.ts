import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const cli = fileURLToPath(new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url))

interface LintReport {
  totals: { errors: number; warnings: number }
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[]
}

// `npm run lint:openapi`, as part of `npm test`: redocly.yaml's `recommended` ruleset, no error and
// no warning (a rule turned off there says why).
it('openapi.yaml passes the Redocly recommended ruleset with no error and no warning', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', 'openapi.yaml', '--format=json'], {
    cwd: root,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
  const report = JSON.parse(stdout) as LintReport
  const found = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
  expect(found).toEqual([])
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
}, 60_000)
