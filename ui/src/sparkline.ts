import { html } from 'htm/preact'
import { useEffect, useRef } from 'preact/hooks'

/** A tiny similarity line for the sessions list (plain canvas: uPlot would be a lot for 40 points). */
export function Sparkline({ values, threshold }: { values: number[]; threshold: number }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const c = canvas.current!
    const ratio = devicePixelRatio || 1
    const w = 120
    const h = 28
    c.width = w * ratio
    c.height = h * ratio
    const ctx = c.getContext('2d')!
    ctx.scale(ratio, ratio)
    ctx.clearRect(0, 0, w, h)
    const y = (v: number) => h - 2 - v * (h - 4)
    ctx.strokeStyle = '#e57373'
    ctx.setLineDash([3, 2])
    ctx.beginPath()
    ctx.moveTo(0, y(threshold))
    ctx.lineTo(w, y(threshold))
    ctx.stroke()
    ctx.setLineDash([])
    if (values.length === 0) return
    const step = values.length > 1 ? w / (values.length - 1) : 0
    ctx.strokeStyle = '#1565c0'
    ctx.lineWidth = 1.5
    ctx.beginPath()
    values.forEach((v, i) => (i === 0 ? ctx.moveTo(i * step, y(v)) : ctx.lineTo(i * step, y(v))))
    ctx.stroke()
  }, [values, threshold])
  return html`<canvas class="sparkline" ref=${canvas} data-points=${values.length} aria-label=${`Similarity of the last ${values.length} steps`}></canvas>`
}
