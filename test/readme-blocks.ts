/**
 * The fenced code blocks of a markdown file, and a runner for the README's shell blocks: each
 * block runs in its own bash, verbatim apart from the substitutions the caller gives, with the
 * shell variables and functions of the blocks before it carried over through a state file.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Block {
  lang: string
  /** The text of a `<!-- readme-test: … -->` comment on the line before the fence, if any. */
  marker: string | undefined
  code: string
  /** 1-based line of the opening fence. */
  line: number
}

export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l))
    if (end < 0) throw new Error(`unclosed code fence at line ${i + 1}`)
    const marker = /^<!-- readme-test: (.+?) -->$/.exec(lines[i - 1] ?? '')?.[1]
    blocks.push({ lang: open[1]!, marker, code: lines.slice(i + 1, end).join('\n'), line: i + 1 })
    i = end
  }
  return blocks
}

/** Names a block assigns (`X=…`, `for x in`), so the next block sees them. */
function assignedNames(code: string): string[] {
  const names = new Set<string>()
  for (const m of code.matchAll(/(?:^|[;\s])([A-Za-z_][A-Za-z0-9_]*)=(?!=)/gm)) names.add(m[1]!)
  for (const m of code.matchAll(/\bfor ([A-Za-z_][A-Za-z0-9_]*) in\b/g)) names.add(m[1]!)
  return [...names]
}

export interface BlockRun {
  code: number | null
  stdout: string
  stderr: string
  /** HTTP status of each curl call, in order. */
  statuses: number[]
  vars: Record<string, string>
  /** JSON bodies printed on stdout, one a line (curl's output plus the newline the wrapper adds). */
  bodies: Record<string, unknown>[]
}

const STATUS = '@@status'
const END = '@@end-of-block'

/**
 * A shell that runs blocks one after another in `dir`. curl is wrapped to add a newline after
 * each body and to log its HTTP status (`-w …%{stderr}…`); the command lines run as written.
 */
export class BlockShell {
  private readonly names = new Set<string>()
  /** Processes a block left running in the background (`cmd &`). */
  readonly background: number[] = []

  private readonly dir: string
  private readonly env: Record<string, string>

  constructor(dir: string, env: Record<string, string>) {
    this.dir = dir
    this.env = env
  }

  async run(code: string): Promise<BlockRun> {
    for (const n of assignedNames(code)) this.names.add(n)
    const state = join(this.dir, '.readme-state')
    const varsFile = join(this.dir, '.readme-vars')
    const bgFile = join(this.dir, '.readme-bg')
    const statusFile = join(this.dir, '.readme-status')
    const names = [...this.names].join(' ')
    const script = [
      // The markers come last whatever happens, a failing command included.
      `trap 'echo ${END}; echo ${END} >&2' EXIT`,
      'set -eo pipefail',
      // Node gives a child sockets for stdio, which /dev/stderr cannot be opened on (`tee
      // /dev/stderr` fails with ENXIO); a terminal or a real pipe can be.
      'exec 2> >(cat >&2)',
      `[ ! -f ${state} ] || source ${state}`,
      // curl's stderr is unbuffered, so its -w pieces are separate writes that another process
      // writing to stderr (`tee /dev/stderr`) can split: the statuses go to a file of their own.
      `: > ${statusFile}`,
      `curl() { command curl -w '\\n%{stderr}${STATUS} %{http_code}\\n' "$@" 2>> ${statusFile}; }`,
      code,
      `{ declare -p ${names} 2>/dev/null || true; declare -f; } > ${state}`,
      `for v in ${names}; do printf '%s=%s\\n' "$v" "\${!v-}"; done > ${varsFile}`,
      `echo "$!" > ${bgFile}`,
    ].join('\n')
    // Pipes, read until the marker the script prints last: a process the block leaves running in
    // the background keeps its copies of them open, so their end never comes while it runs.
    const child = spawn('bash', ['-c', script], { cwd: this.dir, env: this.env })
    const read = (stream: NodeJS.ReadableStream) =>
      new Promise<string>((resolve) => {
        let text = ''
        const onData = (d: Buffer) => {
          text += d.toString('utf8')
          const at = text.indexOf(`${END}\n`)
          if (at >= 0) {
            stream.off('data', onData)
            resolve(text.slice(0, at))
          }
        }
        stream.on('data', onData)
        stream.on('end', () => resolve(text))
      })
    const [exitCode, stdout, stderr] = await Promise.all([
      new Promise<number | null>((resolve, reject) => child.on('error', reject).on('exit', (c) => resolve(c))),
      read(child.stdout),
      read(child.stderr),
    ])
    const bg = existsSync(bgFile) ? readFileSync(bgFile, 'utf8').trim() : ''
    if (bg !== '') this.background.push(Number(bg))
    const vars: Record<string, string> = {}
    for (const line of existsSync(varsFile) ? readFileSync(varsFile, 'utf8').split('\n') : []) {
      const eq = line.indexOf('=')
      if (eq > 0) vars[line.slice(0, eq)] = line.slice(eq + 1)
    }
    const curlLog = readFileSync(statusFile, 'utf8')
    return {
      code: exitCode,
      stdout,
      // curl's own messages (none with -s unless it fails) follow, for a failing block's report.
      stderr: `${stderr}\n[curl]\n${curlLog}`,
      statuses: [...curlLog.matchAll(new RegExp(`${STATUS} (\\d{3})`, 'g'))].map((m) => Number(m[1])),
      vars,
      bodies: stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    }
  }
}
