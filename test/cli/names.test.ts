import { expect, test } from 'bun:test'
import { REGISTERED_NAMES } from '../../src/cli/agent/index.ts'
import { AGENT_COMMAND_NAMES, isAgentCommand } from '../../src/cli/agent/names.ts'

// src/main.ts routes on names.ts alone (so `hark --version` and `hark hook` never load the agent
// commands): a command registered in index.ts but missing there would be "unknown command".
test('the agent command names main.ts routes on are exactly the registered commands', () => {
  expect([...AGENT_COMMAND_NAMES].sort()).toEqual([...REGISTERED_NAMES].sort())
})

test('help about an agent command routes to the agent CLI; the top-level help does not', () => {
  expect(isAgentCommand('help', ['send'])).toBe(true)
  expect(isAgentCommand('help', [])).toBe(false)
  expect(isAgentCommand('serve', [])).toBe(false)
  expect(isAgentCommand(undefined, [])).toBe(false)
})
