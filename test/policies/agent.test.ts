import { expect, test } from 'bun:test'
import { decide, type ServedPolicy, trustedPolicies } from '../../src/agent/policy.ts'
import { tempDir } from '../harness.ts'

/**
 * The agent's reading of what a server hands over as policies (src/agent/policy.ts): anything
 * that is not a policy is skipped (never a crash: the hook must decide nothing rather than
 * fail), and with no pinned passkey nothing is trusted.
 */
test('garbage from the server is skipped; with no pinned key nothing is trusted', () => {
  const env = { HOME: tempDir('hark-policy-agent-') }
  const warned: string[] = []
  const served = [
    null,
    { id: 1 },
    { id: 'pol_x', claim: 5 },
    { id: 'pol_y', claim: '{not json' },
    { id: 'pol_z', claim: '{"type":"hark.policy"}', proof: null },
  ] as unknown as ServedPolicy[]
  expect(trustedPolicies(env, 'default', served, (l) => warned.push(l))).toEqual([])
  expect(warned).toEqual([
    'policy pol_y ignored: the claim is malformed',
    'policy pol_z ignored: the claim is malformed',
  ])
  expect(decide([], { tool: 'Bash', input: { command: 'ls' } }, 'ch_a')).toBeUndefined()
})
