import { describe, expect, test } from 'bun:test'
import type { Block, Message } from '../../src/messages/schema.ts'
import { deadUrl, hookAnswered, permissionRequest, startHook } from './hooks.ts'
import { liveCli } from './live.ts'

/**
 * `hark hook codex` directly (stdin → stdout). Codex hands an undecided action to its own model
 * reviewer, so every outcome but the person's allow is a deny that says why.
 */
const live = liveCli()

const shell = permissionRequest('Bash', { command: 'npm publish', description: 'Publish 1.2.0' })
const decisionOf = (ran: { json(): Record<string, unknown> }) =>
  (ran.json().hookSpecificOutput as { hookEventName: string; decision: unknown }).decision

describe('hark hook codex: PermissionRequest', () => {
  test('an approval offering only "once"; allow → allow', async () => {
    const { question, output } = await hookAnswered(live, ['codex'], shell, { decision: 'allow' })
    expect(question.body.title).toBe('Codex wants to run a command')
    expect(question.body.blocks?.[0]).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      summary: 'npm publish',
      scopes: ['once'],
      danger: true,
    } as Block)
    expect(output).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
  })

  test("deny → deny with the person's message", async () => {
    const { ran } = await hookAnswered(live, ['codex'], shell, {
      decision: 'deny',
      message: 'not before the changelog',
    })
    expect(decisionOf(ran)).toEqual({ behavior: 'deny', message: 'not before the changelog' })
  })

  test('no answer in time → deny saying so; the question expired then', async () => {
    const run = startHook(live, ['codex', '--wait', '1'], shell)
    const question = await run.asked()
    const ran = await run.finished
    expect(ran.code).toBe(0)
    expect(decisionOf(ran)).toEqual({
      behavior: 'deny',
      message:
        'Not allowed: no answer from the person within 1 s. Ask again later or do something else.',
    })
    expect((await live.server.agent.ask(question.id)).message.ask?.status).toBe('expired')
  })

  test('no server, a bad token, bad stdin: deny with the reason, exit 0', async () => {
    const dead = { HARK_URL: await deadUrl(), HARK_TOKEN: live.server.agentToken }
    const badToken = { HARK_URL: live.server.url, HARK_TOKEN: 'hark_nope' }
    const runs = [
      await live.cli.run(['hook', 'codex'], { env: dead, stdin: JSON.stringify(shell) }),
      await live.cli.run(['hook', 'codex'], { env: badToken, stdin: JSON.stringify(shell) }),
      await live.cli.run(['hook', 'codex'], { env: live.env, stdin: 'not json' }),
      await live.cli.run(['hook', 'codex', '--wait', 'x'], { env: live.env, stdin: '{}' }),
    ]
    for (const ran of runs) {
      expect(ran.code).toBe(0)
      const decision = decisionOf(ran) as { behavior: string; message: string }
      expect(decision.behavior).toBe('deny')
      expect(decision.message).toMatch(/^Not allowed: hark could not ask the person \(.+\)\.$/)
      expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1)
    }
  })
})

describe('hark hook codex: notify', () => {
  test('the JSON argument after a turn becomes one message', async () => {
    const turn = {
      type: 'agent-turn-complete',
      'thread-id': 't',
      'turn-id': 'u',
      cwd: '/home/me/p',
      'input-messages': ['fix the build'],
      'last-assistant-message': 'The build is green again.',
    }
    const ran = await live.cli.run(['hook', 'codex', JSON.stringify(turn)], { env: live.env })
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
    const { messages } = await live.server.person.feed(live.server.channelId, { since: 0 })
    expect((messages.at(-1) as Message).body).toEqual({
      title: 'Codex finished',
      text: 'The build is green again.',
    })
  })
})

describe('hark hook codex: notify with no server', () => {
  test('one line on stderr, nothing on stdout (no PermissionRequest deny for a notify)', async () => {
    const env = { HARK_URL: await deadUrl(), HARK_TOKEN: live.server.agentToken }
    const turn = { type: 'agent-turn-complete', 'last-assistant-message': 'done' }
    const ran = await live.cli.run(['hook', 'codex', JSON.stringify(turn)], { env })
    expect([ran.code, ran.stdout]).toEqual([0, ''])
    expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
