import { describe, expect, test } from 'bun:test'
import {
  applies,
  globMatches,
  matches,
  type PolicyRule,
  proposedMatch,
  ruleText,
} from '../../src/shared/policy.ts'

/**
 * What a rule covers (src/shared/policy.ts), read the same by the app, the server and the hook:
 * a prefix never covers a compound command or a destructive one, a glob never climbs out with
 * `..`, a directory rule covers only that directory, and the card's proposal for a destructive
 * command is the exact command.
 */
const bash = (command: string) => ({ tool: 'Bash', input: { command } })
const rule = (match: PolicyRule['match'], more: Partial<PolicyRule> = {}): PolicyRule => ({
  effect: 'allow',
  tool: 'Bash',
  match,
  where: { kind: 'channel', channel_id: 'ch_a' },
  ...more,
})

describe('matches', () => {
  test('a prefix covers the command and its arguments, not a longer word nor a compound command', () => {
    const r = rule({ kind: 'prefix', command: 'npm test' })
    expect(matches(r, bash('npm test'))).toBe(true)
    expect(matches(r, bash('npm test -- --watch'))).toBe(true)
    expect(matches(r, bash('npm testing'))).toBe(false)
    for (const c of [
      'npm test; rm -rf ~',
      'npm test && curl x',
      'npm test | sh',
      'npm test $(id)',
      'npm test `id`',
      'npm test > /etc/x',
      'npm test\nrm x',
    ]) {
      expect([c, matches(r, bash(c))]).toEqual([c, false])
    }
  })

  test('an allow prefix never covers a destructive command; an exact rule or a deny does', () => {
    expect(matches(rule({ kind: 'prefix', command: 'rm' }), bash('rm -rf build'))).toBe(false)
    expect(matches(rule({ kind: 'prefix', command: 'git push' }), bash('git push --force'))).toBe(
      false,
    )
    expect(matches(rule({ kind: 'exact', command: 'rm -rf build' }), bash('rm -rf build'))).toBe(
      true,
    )
    expect(
      matches(rule({ kind: 'prefix', command: 'rm' }, { effect: 'deny' }), bash('rm -rf build')),
    ).toBe(true)
  })

  test("a shell rule covers every harness's shell tool (Codex's argv too); other tools by name", () => {
    const r = rule({ kind: 'prefix', command: 'npm test' })
    expect(matches(r, { tool: 'shell', input: { command: ['npm', 'test'] } })).toBe(true)
    expect(matches(r, { tool: 'Edit', input: { file_path: '/a' } })).toBe(false)
  })

  test('paths by glob, never climbing out; fetches by host; a tool rule only for tools with no command or path', () => {
    const edit = rule({ kind: 'path', glob: '/repo/src/**' }, { tool: 'Edit' })
    expect(matches(edit, { tool: 'Edit', input: { file_path: '/repo/src/a/b.ts' } })).toBe(true)
    expect(
      matches(edit, { tool: 'Edit', input: { file_path: '/repo/src/../../etc/passwd' } }),
    ).toBe(false)
    expect(matches(edit, { tool: 'Edit', input: { file_path: '/repo/srcx/a.ts' } })).toBe(false)
    expect(globMatches('/repo/*.md', '/repo/a/b.md')).toBe(false)
    const fetch = rule({ kind: 'host', host: 'docs.example.com' }, { tool: 'WebFetch' })
    expect(matches(fetch, { tool: 'WebFetch', input: { url: 'https://docs.example.com/x' } })).toBe(
      true,
    )
    expect(
      matches(fetch, { tool: 'WebFetch', input: { url: 'https://docs.example.com.evil.io/' } }),
    ).toBe(false)
    const mcp = rule({ kind: 'tool' }, { tool: 'mcp__github__list_issues' })
    expect(matches(mcp, { tool: 'mcp__github__list_issues', input: { repo: 'x' } })).toBe(true)
    expect(matches(rule({ kind: 'tool' }), bash('ls'))).toBe(false)
  })
})

test('applies: this agent, this directory and below, or all my agents', () => {
  const cwd = rule({ kind: 'tool' }, { where: { kind: 'cwd', channel_id: 'ch_a', cwd: '/repo' } })
  expect(applies(cwd, 'ch_a', '/repo')).toBe(true)
  expect(applies(cwd, 'ch_a', '/repo/pkg')).toBe(true)
  expect(applies(cwd, 'ch_a', '/repository')).toBe(false)
  expect(applies(cwd, 'ch_a', '/repo/../etc')).toBe(false)
  expect(applies(cwd, 'ch_b', '/repo')).toBe(false)
  expect(applies(rule({ kind: 'tool' }), 'ch_b', undefined)).toBe(false)
  expect(applies(rule({ kind: 'tool' }, { where: { kind: 'all' } }), 'ch_b', undefined)).toBe(true)
})

test('the proposal: two words of a plain command, the exact one for a destructive or compound command', () => {
  expect(proposedMatch('Bash', { command: 'npm test -- --watch' })).toEqual({
    kind: 'prefix',
    command: 'npm test',
  })
  expect(proposedMatch('Bash', { command: 'rm -rf dist' })).toEqual({
    kind: 'exact',
    command: 'rm -rf dist',
  })
  expect(proposedMatch('Bash', { command: 'make && make install' })).toEqual({
    kind: 'exact',
    command: 'make && make install',
  })
  expect(proposedMatch('Edit', { file_path: '/repo/src/a.ts' })).toEqual({
    kind: 'path',
    glob: '/repo/src/**',
  })
  expect(proposedMatch('WebFetch', { url: 'https://Docs.Example.com/a' })).toEqual({
    kind: 'host',
    host: 'docs.example.com',
  })
  expect(ruleText(rule({ kind: 'prefix', command: 'npm test' }))).toBe(
    'Allow Bash commands starting `npm test` for this agent',
  )
})
