/**
 * A tiny benchmark harness: each row runs its op in batches after a warm-up and reports the
 * median (and p90) time per op over many batches, which is robust to noise from shared cores.
 * Both CPU time (process.cpuUsage: not inflated when the scheduler runs other work on a
 * loaded machine) and wall time are reported; targets are compared with the CPU median.
 */
export interface BenchRow {
  name: string
  median_us: number
  p90_us: number
  wall_median_us: number
  target_us?: number
}

export interface BenchOptions {
  /** Wall time spent warming up (JIT) before measuring, ms. */
  warmupMs?: number
  /** Number of measured batches; the median is over these. */
  batches?: number
  /** Target per op, µs, printed beside the figure (informational, never asserted). */
  target?: number
}

const rows: BenchRow[] = []
let sink: unknown

function batchSize(fn: () => unknown): number {
  // Size a batch to ~2 ms so timer resolution (1 µs for cpuUsage) does not matter.
  let n = 1
  for (;;) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink = fn()
    const ns = Number(process.hrtime.bigint() - t0)
    if (ns > 2e6 || n >= 1 << 20) return Math.max(1, Math.round((n * 2e6) / Math.max(ns, 1)))
    n *= 2
  }
}

/** Measures `fn` and records a row; returns the row. */
export function bench(name: string, fn: () => unknown, opts: BenchOptions = {}): BenchRow {
  const warmupEnd = performance.now() + (opts.warmupMs ?? 300)
  while (performance.now() < warmupEnd) sink = fn()
  const n = batchSize(fn)
  const cpu: number[] = []
  const wall: number[] = []
  for (let b = 0; b < (opts.batches ?? 60); b++) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink = fn()
    wall.push(Number(process.hrtime.bigint() - t0) / n / 1000)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / n)
  }
  cpu.sort((x, y) => x - y)
  wall.sort((x, y) => x - y)
  const row: BenchRow = {
    name,
    median_us: cpu[Math.floor(cpu.length / 2)]!,
    p90_us: cpu[Math.floor(cpu.length * 0.9)]!,
    wall_median_us: wall[Math.floor(wall.length / 2)]!,
    ...(opts.target === undefined ? {} : { target_us: opts.target }),
  }
  rows.push(row)
  return row
}

/** Prints every recorded row as a table. */
export function report(title: string): void {
  void sink
  console.log(`\n${title}`)
  console.table(
    rows.map((r) => ({
      op: r.name,
      'cpu median µs': r.median_us.toFixed(2),
      'cpu p90 µs': r.p90_us.toFixed(2),
      'wall median µs': r.wall_median_us.toFixed(2),
      'target µs': r.target_us ?? '',
      ok: r.target_us === undefined ? '' : r.median_us <= r.target_us ? 'yes' : 'NO',
    })),
  )
}
