/**
 * A tool's output with what varies between two runs of the same thing masked, so that "the same
 * result" means the same result: uuids, hex ids and memory addresses, timestamps and dates,
 * durations ("in 3.2s", "0.53 seconds", "12ms"), process ids, temporary paths and the shell's
 * line counter. Counts that carry meaning ("5 passed, 1 failed", "running 45%") are kept: a poll
 * whose progress moves is not a loop.
 */

/** Characters of an output compared: the head, where a run's result and its errors are. */
export const MASKED_CHARS = 8000

const MASKS: readonly [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?/gi, '<time>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>'],
  [/\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]* \w{3} +\d{1,2} [\d:]+(?: \w+)? \d{4}\b/gi, '<time>'],
  [/\b0x[0-9a-f]+\b/gi, '<addr>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, '<hex>'],
  [/(?:\/(?:private\/)?tmp|\/var\/folders|\/temp)\/[^\s'":)]+/gi, '<tmp>'],
  [/\btmp[a-z0-9_]{4,}\b/gi, '<tmp>'],
  // Process ids, as shells and runners print them (Gemini CLI's shell: "Process Group PGID: 31331").
  [/\b(pid|pgid|ppid|tid|process|thread)([\s:=#]+)\d+/gi, '$1$2<n>'],
  // The shell's own line counter: "/bin/bash: line 13008: cd: …" grows with every command.
  [/\b(bash|sh|zsh): line \d+/g, '$1: line <n>'],
  [/\b\d+(?:\.\d+)?\s?(?:ms|msec|s|sec|secs|seconds?|minutes?|mins?|m|h|hours?|µs|us|ns)\b/gi, '<duration>'],
]

/** `output` (its first MASKED_CHARS characters) with the volatile parts masked. */
export function maskVolatile(output: string): string {
  let s = output.length > MASKED_CHARS ? output.slice(0, MASKED_CHARS) : output
  for (const [re, to] of MASKS) s = s.replace(re, to)
  return s
}
