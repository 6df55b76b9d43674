import { describe, expect, it } from 'vitest'
import { maskVolatile, MASKED_CHARS } from '../../src/engine/detection/output-mask.js'

describe('maskVolatile', () => {
  it('masks what varies between two runs of the same thing', () => {
    const a = 'run 3f2b8c1e-9d4a-4c7e-8f00-1a2b3c4d5e6f at 2026-11-22T09:00:01.123Z (pid 4242) in 3.2s, object at 0x7f3a2c1e, commit 9fceb02d0ae, /tmp/pytest-of-root/pytest-12/t0 [3/10]'
    const b = 'run 0c9e1f2a-1111-4222-8333-444455556666 at 2026-11-23T17:45:59Z (pid 17) in 12ms, object at 0x55d1, commit 1a410efbd13, /tmp/pytest-of-root/pytest-99/t0 [3/10]'
    expect(maskVolatile(a)).toBe(maskVolatile(b))
    expect(maskVolatile('/bin/bash: line 13008: cd: x: No such file')).toBe(maskVolatile('/bin/bash: line 13023: cd: x: No such file'))
    expect(maskVolatile('Exit Code: 2\nProcess Group PGID: 31331')).toBe(maskVolatile('Exit Code: 2\nProcess Group PGID: 31402'))
  })

  it('keeps counts that carry meaning', () => {
    expect(maskVolatile('5 passed, 1 failed')).not.toBe(maskVolatile('6 passed'))
    expect(maskVolatile('building 45%')).not.toBe(maskVolatile('building 80%'))
    expect(maskVolatile('Error: flight HAT001 is full')).not.toBe(maskVolatile('Error: flight HAT002 is full'))
  })

  it(`compares the first ${MASKED_CHARS} characters`, () => {
    const head = 'x'.repeat(MASKED_CHARS)
    expect(maskVolatile(`${head}tail one`)).toBe(maskVolatile(`${head}tail two`))
  })
})
