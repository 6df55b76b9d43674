import { expect, it } from 'vitest'
import { describeStep } from '@goalkeeper/client/ai'

type Step = Parameters<typeof describeStep>[0]

it("describes a failed tool call as an error step, with the call's arguments as tool.args and the step's tokens", () => {
  const step = {
    text: '',
    toolCalls: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'book', input: { flight: 'UA 12' } }],
    toolResults: [],
    content: [{ type: 'tool-error', toolCallId: 'c1', toolName: 'book', input: { flight: 'UA 12' }, error: new Error('payment declined') }],
    usage: { totalTokens: 42 },
  } as unknown as Step
  expect(describeStep(step)).toEqual({
    description: 'book({"flight":"UA 12"})',
    output: 'book failed: payment declined',
    tool: { name: 'book', args: { flight: 'UA 12' } },
    error: true,
    tokens: 42,
  })
  // Text only: no tool, no error flag.
  expect(describeStep({ text: 'Thinking it over.', toolCalls: [], toolResults: [], content: [] } as unknown as Step)).toEqual({ description: 'Thinking it over.' })
})
