/**
 * A coding agent's hook event in the terms goalkeeper acts on, whichever agent sent it, and the
 * answer it gets; each agent's module (claude-code.ts, codex.ts, gemini-cli.ts) reads its own
 * event JSON into a HookEvent and writes a HookAnswer in its own output JSON.
 */
export type HookEvent =
  /** The session (re)started; `source` "compact" after a compaction (command hooks only: Claude Code sends no SessionStart over http). */
  | { kind: 'session_start'; session: string; source: string }
  /** The context was compacted (Claude Code's PostCompact): the next answer that can carry context recites the session. */
  | { kind: 'compacted'; session: string }
  /** The user's prompt, before the model sees it. */
  | { kind: 'prompt'; session: string; prompt: string }
  /** A tool call about to run. */
  | { kind: 'pre_tool'; session: string; name: string; input: unknown }
  /** A tool call that ran: its response, or its error. */
  | { kind: 'post_tool'; session: string; name: string; input: unknown; response: unknown; error: boolean }
  /** The agent is about to end its turn; `waiting` while background work (subagents) it started still runs. */
  | { kind: 'stop'; session: string; waiting: boolean }
  /** Anything else: accepted, answered with no effect. */
  | { kind: 'other' }

export interface HookAnswer {
  /** Text for the model's context (a goal reminder, a verdict's advice, the recitation). */
  context?: string
  /** Do not run the tool call, for this reason (read by the model). */
  deny?: string
  /** Do not stop: carry on, for this reason (read by the model). */
  block?: string
}
