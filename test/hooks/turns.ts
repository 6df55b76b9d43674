/** What a fake model answers: one assistant turn of text and tool calls, in any provider's API. */

/** One content block of an assistant turn: text, or a call of one of the agent's tools. */
export type Block = { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string }

export interface Turn {
  content: Block[]
  /** Defaults to `tool_use` when the turn calls a tool, `end_turn` otherwise (Anthropic's names). */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence'
}

export const say = (text: string): Turn => ({ content: [{ type: 'text', text }] })
export const useTool = (name: string, input: Record<string, unknown>, text?: string): Turn => ({
  content: [...(text === undefined ? [] : [{ type: 'text' as const, text }]), { type: 'tool_use', name, input }],
})

/** A queue of turns taken one per request, or a function of the request and how many came before it. */
export type Script<Request, Kind = undefined> = Turn[] | ((request: Request, index: number, kind: Kind) => Turn)

/** The next scripted turn; throws (the fake answers 500) when a queue runs out. */
export function nextTurn<Request, Kind>(script: Script<Request, Kind>, request: Request, index: number, kind: Kind): Turn {
  if (typeof script === 'function') return script(request, index, kind)
  const turn = script.shift()
  if (turn === undefined) throw new Error(`the fake model's script has no turn for request ${index}`)
  return turn
}
