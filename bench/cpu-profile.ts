/**
 * Summarises a V8 CPU profile written by `BENCH_CPU_PROF=dir npm run bench:http -- --only …`:
 * self and inclusive time per function, per request, over the load window only (the last
 * `--window` seconds before the server stopped, so start-up and fixture creation stay out).
 *
 *   npx tsx bench/cpu-profile.ts <file.cpuprofile> --requests N [--window 10] [--skip-end 0.3] [--top 40]
 *   npx tsx bench/cpu-profile.ts <file.cpuprofile> --requests N --callers isoAt [--depth 4]
 *
 * `--requests` is the request count of the measured scenario (req/s × duration); without it the
 * figures are total milliseconds. Sampled wall time on a busy machine: compare within one run.
 */
import { readFileSync } from 'node:fs'
import { flag } from './load.js'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

function textFlag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}

const file = process.argv[2]
if (file === undefined || file.startsWith('--')) {
  console.error('usage: tsx bench/cpu-profile.ts <file.cpuprofile> --requests N [--window S] [--callers name]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const requests = flag('requests', 0)
const windowUs = flag('window', 10) * 1e6
const skipEndUs = flag('skip-end', 0.3) * 1e6
const top = flag('top', 40)
const callersOf = textFlag('callers')
const depth = flag('depth', 4)

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`
const stackOf = (id: number): string[] => {
  const out: string[] = []
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.push(label(byId.get(at)!))
  return out
}

// Sample i lasts until the next one; keep the samples inside the load window.
const times: number[] = []
let t = profile.startTime
for (let i = 0; i < profile.samples.length; i++) times.push((t += profile.timeDeltas[i] ?? 0))
const end = times[times.length - 1]! - skipEndUs
const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const callers = new Map<string, number>()
let total = 0
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i]! < end - windowUs || times[i]! > end) continue
  const node = byId.get(profile.samples[i]!)!
  if (node.callFrame.functionName === '(idle)') continue
  const dt = profile.timeDeltas[i + 1] ?? 0
  total += dt
  const stack = stackOf(node.id)
  self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + dt)
  for (const f of new Set(stack)) inclusive.set(f, (inclusive.get(f) ?? 0) + dt)
  if (callersOf !== undefined) {
    const at = stack.findIndex((f) => f.startsWith(`${callersOf} `))
    if (at >= 0) {
      const chain = stack.slice(at, at + depth).join(' ← ')
      callers.set(chain, (callers.get(chain) ?? 0) + dt)
    }
  }
}

const fmt = (us: number) => (requests > 0 ? `${(us / requests).toFixed(1)} µs/req` : `${(us / 1000).toFixed(0)} ms`).padStart(14)
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(fmt(v), k)
}
console.log(`busy time in the window: ${fmt(total).trim()}`)
if (callersOf !== undefined) print(`call chains through ${callersOf}`, callers)
else {
  print('self', self)
  print('inclusive', inclusive)
}
