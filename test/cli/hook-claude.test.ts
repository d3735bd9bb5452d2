import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { Block } from '../../src/messages/schema.ts'
import { deadUrl, expectNoDecision, hookAnswered, permissionRequest, startHook } from './hooks.ts'
import { liveCli } from './live.ts'

const live = liveCli()

const bash = permissionRequest('Bash', { command: 'make test', description: 'Run the tests' })
const suggestion = {
  type: 'addRules',
  rules: [{ toolName: 'Bash', ruleContent: 'make test' }],
  behavior: 'allow',
  destination: 'localSettings',
}
const blockOf = (m: { body: { blocks?: Block[] } }) => m.body.blocks?.[0] ?? ({} as Block)
const decisionOf = (output: Record<string, unknown>) =>
  (output.hookSpecificOutput as { decision: Record<string, unknown> }).decision

describe('hark hook claude: PermissionRequest', () => {
  test('asks an approval with what will happen, and allows once on "allow"', async () => {
    const { question, output } = await hookAnswered(live, ['claude'], bash, { decision: 'allow' })
    expect(question.body.title).toBe('Claude Code wants to run a command')
    const block = question.body.blocks?.[0] as Block
    expect(block).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      input: { command: 'make test', description: 'Run the tests' },
      summary: 'make test',
      cwd: '/home/me/project',
      session: 'session-1',
      scopes: ['once'],
    })
    expect(block.danger).toBeUndefined()
    const canonical =
      '{"input":{"command":"make test","description":"Run the tests"},"tool":"Bash"}'
    expect(question.ask?.request_hash).toBe(createHash('sha256').update(canonical).digest('hex'))
    expect(output).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
  })

  test('allow for the session: the offered suggestions, for this session only', async () => {
    const event = { ...bash, permission_suggestions: [suggestion] }
    const { question, output } = await hookAnswered(live, ['claude'], event, {
      decision: 'allow',
      scope: 'session',
    })
    expect(blockOf(question).scopes).toEqual(['once', 'session'])
    // The card says what "Allow for this session" will remember, before the tap.
    expect(blockOf(question).session_rules).toEqual(['Bash(make test)'])
    expect(decisionOf(output)).toEqual({
      behavior: 'allow',
      updatedPermissions: [{ ...suggestion, destination: 'session' }],
    })
  })

  test("deny carries the person's message; without one, a plain reason", async () => {
    const said = await hookAnswered(live, ['claude'], bash, {
      decision: 'deny',
      message: 'run only the unit tests',
    })
    expect(decisionOf(said.output)).toEqual({
      behavior: 'deny',
      message: 'run only the unit tests',
    })
    const plain = await hookAnswered(live, ['claude'], bash, { decision: 'deny' })
    expect(decisionOf(plain.output)).toEqual({
      behavior: 'deny',
      message: 'The person denied this from Hark.',
    })
  })

  test('a destructive command is marked danger; an Edit reads as editing its file', async () => {
    const rm = permissionRequest('Bash', { command: 'git push --force origin main' })
    const { question } = await hookAnswered(live, ['claude'], rm, { decision: 'deny' })
    expect(blockOf(question).danger).toBe(true)
    const edit = permissionRequest('Edit', {
      file_path: '/home/me/project/src/a.ts',
      old_string: 'a',
      new_string: 'b',
    })
    const edited = await hookAnswered(live, ['claude'], edit, { decision: 'allow' })
    expect(edited.question.body.title).toBe('Claude Code wants to edit a file')
    expect(blockOf(edited.question).summary).toBe('Edit /home/me/project/src/a.ts')
  })

  test('no answer within --wait: nothing decided, one line, the question expired then', async () => {
    const run = startHook(live, ['claude', '--wait', '1'], bash)
    const question = await run.asked()
    expectNoDecision(await run.finished, /no answer within 1 s/)
    const read = await live.server.agent.ask(question.id)
    expect(read.message.ask).toMatchObject({ status: 'expired' })
  })

  test('HARK_HOOK_WAIT bounds the wait too', async () => {
    const run = startHook(live, ['claude'], bash, { ...live.env, HARK_HOOK_WAIT: '1' })
    await run.asked()
    expectNoDecision(await run.finished, /no answer within 1 s/)
  })

  test('SIGTERM from the agent (answered in the terminal) withdraws the question', async () => {
    const proc = Bun.spawn(
      [process.execPath, `${import.meta.dir}/../../src/main.ts`, 'hook', 'claude'],
      {
        env: { ...process.env, ...live.env, HOME: live.cli.home },
        stdin: new TextEncoder().encode(JSON.stringify(bash)),
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const before = (await live.server.person.openAsks()).asks.length
    let open = before
    while (open === before) open = (await live.server.person.openAsks()).asks.length
    const { asks } = await live.server.person.openAsks()
    const question = asks.at(-1)
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    expect(await new Response(proc.stdout).text()).toBe('')
    const read = await live.server.agent.ask(question?.id as string)
    expect(read.message.ask).toMatchObject({
      status: 'cancelled',
      reason: 'answered in the terminal',
    })
  })
})

describe('hark hook claude: failures decide nothing and exit 0', () => {
  test('no server: one line, quickly', async () => {
    const env = { HARK_URL: await deadUrl(), HARK_TOKEN: live.server.agentToken }
    const ran = await live.cli.run(['hook', 'claude'], { env, stdin: JSON.stringify(bash) })
    expectNoDecision(ran, /cannot reach the server.*nothing decided/)
  })

  test('a bad token: one line', async () => {
    const env = { HARK_URL: live.server.url, HARK_TOKEN: 'hark_not_a_token' }
    const ran = await live.cli.run(['hook', 'claude'], { env, stdin: JSON.stringify(bash) })
    expectNoDecision(ran, /nothing decided/)
  })

  test('not connected at all: one line', async () => {
    const ran = await live.cli.run(['hook', 'claude'], { stdin: JSON.stringify(bash) })
    expectNoDecision(ran, /not connected.*nothing decided/)
  })

  test('bad stdin of every kind: one line naming what is wrong, nothing asked', async () => {
    const before = (await live.server.person.openAsks()).asks.length
    const cases: [string, RegExp][] = [
      ['', /not JSON/],
      ['{"hook_event_name":', /not JSON/],
      ['[1,2]', /not a JSON object/],
      ['"PermissionRequest"', /not a JSON object/],
      ['{}', /no "hook_event_name"/],
      ['{"hook_event_name":"PermissionRequest"}', /no "tool_name"/],
      ['{"hook_event_name":"SessionStart"}', /not an event hark handles/],
      [JSON.stringify(permissionRequest('AskUserQuestion', {})), /has no questions/],
    ]
    for (const [stdin, pattern] of cases) {
      const ran = await live.cli.run(['hook', 'claude'], { env: live.env, stdin })
      expectNoDecision(ran, pattern)
    }
    expect((await live.server.person.openAsks()).asks.length).toBe(before)
  })

  test('usage mistakes never exit 2 (exit 2 means "block" to Claude Code)', async () => {
    const stdin = JSON.stringify(bash)
    for (const args of [
      ['hook', 'nobody'],
      ['hook', 'claude', '--wait', 'soon'],
      ['hook', 'claude', '--nope'],
    ]) {
      const ran = await live.cli.run(args, { env: live.env, stdin })
      expectNoDecision(ran, /./)
    }
    const help = await live.cli.run(['hook', '--help'], { env: live.env, stdin })
    expect([help.code, help.stdout]).toEqual([0, ''])
  })
})
