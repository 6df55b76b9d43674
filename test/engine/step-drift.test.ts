import { describe, expect, it } from 'vitest'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'

const clock = () => Date.UTC(2026, 10, 22, 9)
const ISSUE = 'lastPage in src/pagination.ts returns an empty last page when the total is a multiple of the page size'
const bash = (command: string): StepSignals => ({ tool: { name: 'Bash', args: { command } } })
// Each step's words share nothing with the issue: the text alone graded every one of them drift.
const CODING: [string, string, StepSignals][] = [
  ['Let me look around first', 'README.md src test', bash('ls -la')],
  ['Let me open it', 'export function lastPage(', { tool: { name: 'Read', args: { file_path: 'src/pagination.ts' } } }],
  ['Run them', '12 passed', bash('npx vitest run')],
  ['Check what changed', 'diff --git', bash('git diff')],
]
// Four in a row: sustained drift (consecutive_limit 3).
const OFF = ['browse cat pictures on reddit', 'compare espresso machines for the office kitchen', 'book a table for friday dinner', 'plan the team offsite in lisbon']
// Shares "total" and "page" with the issue, and nothing a call touches.
const WORDS = 'the total of the office party bill, page two of the menu'

describe("a step's drift check defers to its evidence", () => {
  it.each(['lexical', 'enhanced'] as const)('%s: a call touching a file the goal names, housekeeping and a test run are no drift', (similarity) => {
    const s = new GoalSession({ goal: ISSUE, config: { similarity } }, { clock })
    for (const [description, output, signals] of CODING) {
      // Under enhanced, a similarity given from outside (as an embeddings cosine would be) far under its threshold.
      const r = s.step(description, output, similarity === 'enhanced' ? 0.01 : undefined, signals)
      expect(r.drift, description).toMatchObject({ severity: 'none', event: null, consecutive_drift_count: 0 })
    }
    expect(s.trend().total_drift_events).toBe(0)
  })

  it('text off the goal with nothing to show for it is still drift, and sustained drift is reported', () => {
    const s = new GoalSession({ goal: ISSUE }, { clock })
    const results = OFF.map((text) => s.step(text))
    for (const r of results) expect(r.drift).toMatchObject({ severity: 'critical', event: { severity: 'critical' } })
    expect(results.at(-1)!.events.map((e) => e.type)).toContain('drift_detected')
    // A neutral step between (a housekeeping call) neither ends the drift nor adds to it.
    const neutral = s.step('Let me look around first', 'README.md', undefined, bash('ls -la'))
    expect(neutral.drift).toMatchObject({ severity: 'none', event: null, consecutive_drift_count: 4, drifting: true })
  })

  it('a session stored before drift_evidence (the field absent) keeps the text-only drift check', () => {
    const json = new GoalSession({ goal: ISSUE }, { clock }).toJSON()
    expect(json.config).toMatchObject({ alignment: 'evidence', drift_evidence: true })
    delete json.config.drift_evidence
    const stored = GoalSession.fromJSON(json, { clock })
    const [description, output, signals] = CODING[1]!
    expect(stored.step(description, output, undefined, signals).drift.event).not.toBeNull()
  })

  it('lexical: words that make the step aligned overrule the text, which keyword alignment does not read', () => {
    const evidence = new GoalSession({ goal: ISSUE }, { clock }).step(WORDS)
    expect(evidence.verification.reasoning).toContain('goal terms [total, page]')
    expect(evidence.drift).toMatchObject({ severity: 'none', event: null })
    const keywords = new GoalSession({ goal: ISSUE, config: { alignment: 'keywords' } }, { clock }).step(WORDS)
    expect(keywords.drift.event).not.toBeNull()
  })

  it('enhanced: shared words do not overrule its similarity, which weighs them better', () => {
    const s = new GoalSession({ goal: ISSUE, config: { similarity: 'enhanced' } }, { clock })
    // A similarity given from outside (as an embeddings cosine would be), well under the threshold.
    const r = s.step(WORDS, '', 0.01)
    expect(r.verification.reasoning).toContain('goal terms [total, page]')
    expect(r.drift.event).toMatchObject({ severity: 'critical' })
  })
})
