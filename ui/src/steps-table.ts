import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { num, truncate, when } from './format.js'
import type { Step } from './types.js'

/** Rows shown before "Show all": a long run's table would cost more to lay out than the chart. */
const FIRST_ROWS = 100

/** The step log, newest first: description, output, verdict and reasoning. */
export function StepsTable({ steps }: { steps: Step[] }) {
  const [all, setAll] = useState(false)
  const rows = steps.slice(all ? 0 : -FIRST_ROWS).reverse()
  return html` <table class="list steps">
      <thead>
        <tr>
          <th>#</th>
          <th>Description</th>
          <th>Output</th>
          <th>Verdict</th>
          <th>Similarity</th>
          <th>Reasoning</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (s) =>
            html` <tr key=${s.step_number} id=${`step-${s.step_number}`} data-step=${s.step_number}>
              <td class="num">
                ${s.step_number}
                <div class="muted small">${when(s.created_at)}</div>
              </td>
              <td class="text">${s.description}</td>
              <td class="text">
                ${
                  s.output
                    ? html`<details>
                        <summary>${truncate(s.output, 81)}</summary>
                        <pre>${s.output}</pre>
                      </details>`
                    : html`<span class="muted">—</span>`
                }
              </td>
              <td>
                <span class=${`badge action-${s.verification.recommended_action}`}>${s.verification.recommended_action}</span>
                <div class="small">${s.verification.aligned ? 'aligned' : 'not aligned'} · ${num(s.verification.alignment_score)}</div>
              </td>
              <td><span class=${`dot sev-${s.drift.severity}`}></span>${num(s.drift.similarity, 3)} <span class="small">${s.drift.severity}${s.drift.drifting ? ', drifting' : ''}</span></td>
              <td class="text small">${s.verification.reasoning}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${!all && steps.length > FIRST_ROWS && html`<p><button class="show-all" onClick=${() => setAll(true)}>Show all ${steps.length} steps</button></p>`}`
}
