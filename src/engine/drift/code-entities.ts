/**
 * What a coding step touches, read the way an engineer reads it: the files, symbols and errors a
 * text or a tool call names, and whether a call is housekeeping (listing, changing directory,
 * looking at git, running the tests, updating a todo list), which says nothing about the goal
 * either way. The goal's own entities come from the same reader, so a `Read {file_path}` of a
 * file the issue names, a grep for a function it names, or a test run that prints the error it
 * reports is evidence of work on the goal.
 */

export interface Entities {
  /** File names (lowercased basenames, `ndarithmetic.py`). */
  files: Set<string>
  /** Identifiers (lowercased): snake_case, camelCase, dotted parts, error names. */
  symbols: Set<string>
}

/** A token that may be a path: split at blanks, quotes, brackets and separators (one linear scan, no backtracking). */
const TOKEN_RE = /[^\s'"`()<>,;=[\]{}|]+/g
/** A path or file name ends with an extension of source or configuration (after trailing punctuation is cut). */
const FILE_EXT_RE = /\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|java|kt|scala|go|rb|rs|c|cc|cpp|h|hpp|cs|php|swift|m|sql|sh|md|rst|txt|json|ya?ml|toml|ini|cfg|xml|html|css|qdp|csv)$/i
/** An identifier with an inner `_`, an inner capital (camelCase, PascalCase with two humps) or a call `name(`. */
const SYMBOL_RE = /\b(?:[A-Za-z]\w*_\w+|_+[A-Za-z]\w{2,}|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Za-z]\w{3,}(?=\())/g
/** Basenames too common to identify a file. */
const VAGUE_FILES = new Set(['__init__.py', 'setup.py', 'readme.md', 'index.js', 'index.ts', 'main.py', 'test.py', 'conftest.py', 'package.json'])
/** Identifiers that name nothing of a task (Python's dunders, common builtins). */
const VAGUE_SYMBOLS = new Set([
  '__init__',
  '__name__',
  '__main__',
  'self',
  'print(',
  'isinstance',
  'getattr',
  'setattr',
  'hasattr',
  'assert_equal',
  'test_',
  'file_path',
  'old_str',
  'new_str',
  'file_text',
  'view_range',
])

function basename(path: string): string {
  const i = path.lastIndexOf('/')
  return (i < 0 ? path : path.slice(i + 1)).toLowerCase()
}

/** The basenames (lowercased) of the paths and file names in `text`, vague ones included. */
function fileNames(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(TOKEN_RE)) {
    const t = m[0].replace(/[.:!?]+$/, '')
    if (t.includes('.') && FILE_EXT_RE.test(t)) out.push(basename(t))
  }
  return out
}

/** Adds the files and symbols `text` names to `into` (`symbolsOnly`: the symbols alone). */
export function addEntities(text: string, into: Entities, symbolsOnly = false): Entities {
  if (!symbolsOnly) {
    for (const b of fileNames(text)) if (b.length > 3 && !b.startsWith('.') && !VAGUE_FILES.has(b)) into.files.add(b)
  }
  for (const m of text.matchAll(SYMBOL_RE)) {
    const s = m[0].toLowerCase()
    if (s.length >= 4 && !VAGUE_SYMBOLS.has(s) && !FILE_EXT_TAIL.test(s)) into.symbols.add(s)
  }
  return into
}

/** A symbol match that is really a file name's tail (`qdp_py` never occurs, but `test_qdp` from `test_qdp.py` does and is fine). */
const FILE_EXT_TAIL = /^(?:py|js|ts)$/

export function entitiesOf(text: string): Entities {
  return addEntities(text, { files: new Set(), symbols: new Set() })
}

/**
 * What a tool call does, for reading it: `look` reads or searches, `change` writes a file, `run`
 * executes a shell command, `chore` is housekeeping, `other` a tool of the agent's own (its
 * arguments say what it does).
 */
export type CallKind = 'look' | 'change' | 'run' | 'chore' | 'other'

export interface CallReading {
  kind: CallKind
  /** Files the call names in its arguments (lowercased basenames, vague ones included). */
  files: string[]
  /** The call's arguments as one text (values only), for entity and word matching. */
  text: string
}

const CHORE_TOOLS = new Set([
  'todowrite',
  'todoread',
  'think',
  'bashoutput',
  'killshell',
  'taskoutput',
  'finish',
  'submit',
  'format_error',
  'message',
  'scroll_down',
  'scroll_up',
  'goto',
  'exit_plan_mode',
  'exitplanmode',
])
const CHANGE_TOOLS = new Set(['edit', 'write', 'multiedit', 'notebookedit', 'create', 'apply_patch', 'insert'])
const LOOK_TOOLS = new Set(['read', 'glob', 'grep', 'ls', 'open', 'find_file', 'search_dir', 'search_file', 'view', 'webfetch', 'websearch', 'notebookread'])
/** Editor sub-commands (OpenHands' str_replace_editor and the like) by what they do. */
const EDITOR_CHANGES = new Set(['create', 'str_replace', 'insert', 'undo_edit', 'write'])
/** Shell programs whose runs are housekeeping: where am I, what changed, install, wait. */
const CHORE_COMMANDS = new Set([
  'ls',
  'cd',
  'pwd',
  'echo',
  'sleep',
  'which',
  'env',
  'export',
  'clear',
  'true',
  'mkdir',
  'whoami',
  'source',
  'pip',
  'pip3',
  'conda',
  'apt',
  'apt-get',
  'npm',
  'yarn',
  'pnpm',
  'kill',
  'ps',
  'chmod',
  'rm',
  'mv',
  'cp',
  'tree',
  'wc',
  'du',
  'df',
  'date',
  'history',
  'git',
])
/** Package managers: their installs and upkeep (INSTALLS) are chores, other subcommands (`npm test`, `yarn build`) run something. */
const PACKAGE_MANAGERS = new Set(['npm', 'yarn', 'pnpm'])
const INSTALLS = new Set(['install', 'i', 'ci', 'add', 'remove', 'rm', 'uninstall', 'update', 'upgrade', 'outdated', 'ls', 'list', 'config', 'init', 'link'])
/** Shell programs that read or search. */
const LOOK_COMMANDS = new Set(['cat', 'head', 'tail', 'less', 'more', 'grep', 'rg', 'ag', 'find', 'sed', 'awk', 'nl', 'diff', 'file', 'stat', 'fd'])

/** The first program a shell command runs, past `cd x &&`, env assignments and `timeout N`. */
function firstProgram(command: string): string {
  for (const part of command.split(/&&|;|\|\|/)) {
    const words = part
      .trim()
      .split(/\s+/)
      .filter((w) => !/^\w+=/.test(w))
    while (words[0] === 'timeout' || words[0] === 'sudo' || /^\d+s?$/.test(words[0] ?? '')) words.shift()
    const p = basename(words[0] ?? '')
    if (p === '' || p === 'cd' || p === 'source' || p === 'export') continue
    return p
  }
  return 'cd'
}

/** The word after `program` in a command (`test` in `cd app && npm test`), or ''. */
function subcommand(command: string, program: string): string {
  const words = command.split(/\s+/)
  const at = words.findIndex((w) => basename(w) === program)
  return words.slice(at + 1).find((w) => !w.startsWith('-')) ?? ''
}

function flatText(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v)
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v))
  else if (Array.isArray(v)) for (const x of v) flatText(x, out)
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) flatText(x, out)
}

/** A step's tool call: its name and arguments. */
export interface StepTool {
  name: string
  args: Record<string, unknown>
}

/** A call's shell or editor command (`command`, else `cmd`), when it has one. */
export function callCommand(tool: StepTool): string | undefined {
  const args = tool.args
  return typeof args.command === 'string' ? args.command : typeof args.cmd === 'string' ? args.cmd : undefined
}

/** What a tool call does, from its name and its command (no look at its other arguments). */
export function callKind(tool: StepTool): CallKind {
  const name = tool.name.toLowerCase()
  const command = callCommand(tool)
  if (CHORE_TOOLS.has(name)) return 'chore'
  if (CHANGE_TOOLS.has(name)) return 'change'
  if (LOOK_TOOLS.has(name)) return 'look'
  if (command !== undefined && /^[a-z_]+$/.test(command)) return EDITOR_CHANGES.has(command) ? 'change' : 'look' // str_replace_editor view/create/…
  if (command !== undefined) {
    const program = firstProgram(command)
    if (PACKAGE_MANAGERS.has(program) && !INSTALLS.has(subcommand(command, program))) return 'run'
    return CHORE_COMMANDS.has(program) ? 'chore' : LOOK_COMMANDS.has(program) ? 'look' : 'run'
  }
  return 'other'
}

// A step's call is read by the evidence reader and the busy-stall check: the last reading is kept.
let lastTool: StepTool | undefined
let lastReading: CallReading | undefined

/** Reads a tool call: its kind, the files it names and its argument text. */
export function readCall(tool: StepTool): CallReading {
  if (tool === lastTool) return lastReading!
  const parts: string[] = []
  flatText(tool.args, parts)
  const text = parts.join('\n')
  lastTool = tool
  lastReading = { kind: callKind(tool), files: [...new Set(fileNames(text))], text }
  return lastReading
}
