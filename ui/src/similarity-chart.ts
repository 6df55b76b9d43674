import { html } from 'htm/preact'
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { SEVERITY_COLOURS } from './format.js'
import type { Marker } from './markers.js'
import type { Step } from './types.js'

interface Props {
  steps: Step[]
  threshold: number
  markers: Marker[]
}

/** The latest props, read by the draw hook (uPlot keeps the hook it was created with). */
interface Live {
  steps: Step[]
  threshold: number
  markers: Marker[]
}

/**
 * Similarity per step (uPlot): the line, one point per step in its severity's colour, the drift
 * threshold dashed, and markers over the plot as elements (loop, stall and sustained drift as
 * lines, replan and abort as ticks at the foot) so they can be hovered, read and tested. Each
 * draw leaves a `gk:chart-drawn` performance mark (bench/ui.bench.ts times the first one).
 */
export function SimilarityChart({ steps, threshold, markers }: Props) {
  const box = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const live = useRef<Live>({ steps, threshold, markers })
  live.current = { steps, threshold, markers }

  useEffect(() => {
    const el = box.current!
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 280,
        // Half a step of room each side, so the first and last points are drawn whole.
        scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, y: { range: [0, 1] } },
        // Whole steps only on the x axis.
        axes: [{ label: 'step', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000] }, { label: 'similarity to the goal' }],
        series: [{ label: 'step' }, { label: 'similarity', stroke: '#1565c0', width: 1.5, points: { show: false } }],
        cursor: { drag: { x: false, y: false } },
        hooks: { draw: [(u) => decorate(u, el, live.current)] },
      },
      toData(steps),
      el,
    )
    plot.current = u
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 280 }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      u.destroy()
      plot.current = null
    }
  }, [])

  useEffect(() => {
    plot.current?.setData(toData(steps))
  }, [steps, threshold, markers])

  return html`<div class="chart" ref=${box} aria-label="Similarity per step"></div>`
}

const toData = (steps: Step[]): uPlot.AlignedData => [steps.map((s) => s.step_number), steps.map((s) => s.drift.similarity)]

function decorate(u: uPlot, el: HTMLElement, { steps, threshold, markers }: Live): void {
  const ctx = u.ctx
  const { left, top, width, height } = u.bbox
  ctx.save()
  ctx.beginPath()
  ctx.rect(left, top, width, height)
  ctx.clip()
  // The drift threshold: below it a step counts as drift.
  const ty = u.valToPos(threshold, 'y', true)
  ctx.strokeStyle = '#c62828'
  ctx.lineWidth = uPlot.pxRatio
  ctx.setLineDash([6 * uPlot.pxRatio, 4 * uPlot.pxRatio])
  ctx.beginPath()
  ctx.moveTo(left, ty)
  ctx.lineTo(left + width, ty)
  ctx.stroke()
  ctx.setLineDash([])
  const r = (steps.length > 200 ? 2 : 3.5) * uPlot.pxRatio
  let drawn = 0
  for (const s of steps) {
    ctx.fillStyle = SEVERITY_COLOURS[s.drift.severity] ?? '#555'
    ctx.beginPath()
    ctx.arc(u.valToPos(s.step_number, 'x', true), u.valToPos(s.drift.similarity, 'y', true), r, 0, 2 * Math.PI)
    ctx.fill()
    drawn++
  }
  ctx.restore()
  el.dataset.points = String(drawn)

  // Overlay elements, in CSS pixels relative to the plot area (u.over).
  const over = u.over
  over.querySelectorAll('.marker, .threshold-label').forEach((m) => m.remove())
  const label = document.createElement('span')
  label.className = 'threshold-label'
  label.textContent = `drift threshold ${threshold}`
  label.style.top = `${u.valToPos(threshold, 'y')}px`
  over.append(label)
  for (const m of markers) {
    const x = u.valToPos(m.step, 'x')
    if (!Number.isFinite(x)) continue
    const div = document.createElement('div')
    div.className = `marker marker-${m.kind}`
    div.dataset.step = String(m.step)
    div.dataset.kind = m.kind
    div.title = m.label
    div.style.left = `${x}px`
    if (m.kind === 'loop' || m.kind === 'stall' || m.kind === 'drift') {
      const tag = document.createElement('span')
      tag.textContent = m.kind[0]!.toUpperCase()
      div.append(tag)
    }
    over.append(div)
  }
  performance.mark('gk:chart-drawn', { detail: { points: drawn } })
}
