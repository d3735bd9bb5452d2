import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Block, Message } from '../../src/messages/schema.ts'
import { deadUrl, expectNoDecision, hookAnswered, permissionRequest, startHook } from './hooks.ts'
import { liveCli } from './live.ts'

/** `hark hook claude` for the events besides a tool's approval: stdin in, stdout out. */
const live = liveCli()

const base = { session_id: 'session-2', transcript_path: '/tmp/t.jsonl', cwd: '/home/me/p' }

const lastMessage = async (): Promise<Message> => {
  const { messages } = await live.server.person.feed(live.server.channelId, { since: 0 })
  return messages.at(-1) as Message
}

describe('AskUserQuestion (as a permission request)', () => {
  const input = {
    questions: [
      {
        question: 'Which framework?',
        header: 'Framework',
        multiSelect: false,
        options: [
          { label: 'Preact', description: 'small' },
          { label: 'React', description: 'big' },
        ],
      },
      {
        question: 'Which targets?',
        header: 'Targets',
        multiSelect: true,
        options: [
          { label: 'web', description: '' },
          { label: 'ios', description: '' },
        ],
      },
    ],
  }

  test('one choice per question, multi-select kept; answers in updatedInput.answers', async () => {
    const event = permissionRequest('AskUserQuestion', input)
    const { question, output } = await hookAnswered(live, ['claude'], event, {
      q0: 'My own',
      q1: ['ios', 'web'],
    })
    const blocks = question.body.blocks as Block[]
    expect(blocks.map((b) => [b.type, b.multi, b.other])).toEqual([
      ['choice', false, true],
      ['choice', true, true],
    ])
    expect(blocks[0]?.label).toBe('Framework: Which framework?')
    expect(blocks[0]?.options).toEqual([
      { label: 'Preact', description: 'small' },
      { label: 'React', description: 'big' },
    ])
    expect(output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'allow',
          updatedInput: {
            ...input,
            answers: { 'Which framework?': 'My own', 'Which targets?': 'ios, web' },
          },
        },
      },
    })
  })

  test('a single question answers with its value', async () => {
    const one = { questions: [input.questions[0]] }
    const { output } = await hookAnswered(
      live,
      ['claude'],
      permissionRequest('AskUserQuestion', one),
      'React',
    )
    const decision = (output.hookSpecificOutput as { decision: { updatedInput: unknown } }).decision
    expect(decision.updatedInput).toEqual({ ...one, answers: { 'Which framework?': 'React' } })
  })
})

describe('Elicitation', () => {
  const event = {
    ...base,
    hook_event_name: 'Elicitation',
    mcp_server_name: 'deploy',
    message: 'Where to deploy?',
    mode: 'form',
    requested_schema: {
      type: 'object',
      properties: {
        region: {
          type: 'string',
          title: 'Region',
          enum: ['eu', 'us'],
          enumNames: ['Europe', 'USA'],
        },
        replicas: { type: 'integer', minimum: 1, maximum: 9 },
        canary: { type: 'boolean', title: 'Canary first' },
        note: { type: 'string', description: 'anything else' },
      },
      required: ['region', 'replicas'],
    },
  }
  const output = (action: string, content?: unknown) => ({
    hookSpecificOutput: { hookEventName: 'Elicitation', action, ...(content ? { content } : {}) },
  })

  test('the schema becomes typed inputs; sent → accept with typed content', async () => {
    const { question, output: out } = await hookAnswered(live, ['claude'], event, {
      f0: 'eu',
      f1: 3,
      f2: true,
      f3: null,
      hark_decision: 'accept',
    })
    const blocks = question.body.blocks as Block[]
    expect(blocks.map((b) => b.type)).toEqual([
      'markdown',
      'choice',
      'number_input',
      'toggle',
      'text_input',
      'choice',
    ])
    expect(blocks[1]?.options).toEqual([
      { label: 'Europe', value: 'eu' },
      { label: 'USA', value: 'us' },
    ])
    expect(blocks[2]).toMatchObject({ min: 1, max: 9 })
    expect(out).toEqual(output('accept', { region: 'eu', replicas: 3, canary: true }))
  })

  test('declined → decline; a required field left empty → decline, said on stderr', async () => {
    const declined = await hookAnswered(live, ['claude'], event, { hark_decision: 'decline' })
    expect(declined.output).toEqual(output('decline'))
    const run = startHook(live, ['claude'], event)
    const q = await run.asked()
    await live.server.person.answer(q.id, { f0: 'us', hark_decision: 'accept' })
    const ran = await run.finished
    expect(ran.json()).toEqual(output('decline'))
    expect(ran.stderr).toContain('required field')
  })

  test('no answer in time → cancel', async () => {
    const run = startHook(live, ['claude', '--wait', '1'], event)
    await run.asked()
    const ran = await run.finished
    expect(ran.code).toBe(0)
    expect(ran.json()).toEqual(output('cancel'))
  })
})

describe('Elicitation in URL mode', () => {
  const page = {
    ...base,
    hook_event_name: 'Elicitation',
    mcp_server_name: 'hark',
    mode: 'url',
    message: 'The agent asks for the secret "NPM_TOKEN". Open Hark to enter it.',
    url: 'https://hark.example/c/ch_abc123#msg_def456',
    elicitation_id: 'sec_ghi789',
  }

  test("Hark's own secret page (request_secret): the hook steps aside, no second card", async () => {
    const before = await lastMessage()
    const ran = await live.cli.run(['hook', 'claude'], {
      env: live.env,
      stdin: JSON.stringify(page),
    })
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
    expect((await lastMessage()).id).toBe(before.id)
  })

  test("another server's page still becomes a card with its link; Done → accept", async () => {
    const other = { ...page, mcp_server_name: 'billing', elicitation_id: 'pay-42' }
    const { question, output } = await hookAnswered(live, ['claude'], other, true)
    expect(question.body.title).toBe('billing asks you to open a page')
    expect(question.body.blocks?.[1]).toMatchObject({ type: 'link', url: page.url })
    expect(output).toEqual({
      hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept' },
    })
  })
})

describe('Notification and Stop', () => {
  test('a notification becomes a message; permission prompts are not repeated', async () => {
    const note = { ...base, hook_event_name: 'Notification', notification_type: 'idle_prompt' }
    const ran = await live.cli.run(['hook', 'claude'], {
      env: live.env,
      stdin: JSON.stringify({ ...note, message: 'Claude is waiting for your input' }),
    })
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
    expect((await lastMessage()).body).toEqual({
      title: 'Claude Code',
      text: 'Claude is waiting for your input',
    })
    const before = await lastMessage()
    const prompt = { ...note, notification_type: 'permission_prompt', message: 'needs permission' }
    await live.cli.run(['hook', 'claude'], { env: live.env, stdin: JSON.stringify(prompt) })
    expect((await lastMessage()).id).toBe(before.id)
  })

  test('Stop sends the last assistant message', async () => {
    const stop = {
      ...base,
      hook_event_name: 'Stop',
      stop_hook_active: false,
      last_assistant_message: 'All 42 tests pass.',
    }
    const ran = await live.cli.run(['hook', 'claude'], {
      env: live.env,
      stdin: JSON.stringify(stop),
    })
    expect([ran.code, ran.stdout]).toEqual([0, ''])
    expect((await lastMessage()).body).toEqual({
      title: 'Claude Code finished',
      text: 'All 42 tests pass.',
    })
  })

  test("Stop --reply: the person's reply continues the session", async () => {
    const stop = { ...base, hook_event_name: 'Stop', last_assistant_message: 'Done. Next?' }
    const { question, output } = await hookAnswered(
      live,
      ['claude', '--reply'],
      stop,
      'now write the docs',
    )
    expect(question.body.text).toBe('Done. Next?')
    expect(question.body.blocks?.[0]).toMatchObject({ type: 'text_input', id: 'reply' })
    expect(output).toEqual({ decision: 'block', reason: 'now write the docs' })
  })

  test('Stop --reply with no reply in time: nothing, the session ends', async () => {
    const stop = { ...base, hook_event_name: 'Stop', last_assistant_message: 'Done.' }
    const run = startHook(live, ['claude', '--reply', '--wait', '1'], stop)
    await run.asked()
    expectNoDecision(await run.finished, /no answer within 1 s/)
  })
})

describe('answered in the terminal: PostToolUse and Stop withdraw what is still open', () => {
  const bash = permissionRequest(
    'Bash',
    { command: 'make release', description: 'Release' },
    { session_id: 'session-3' },
  )

  test('PostToolUse for that exact action withdraws its approval', async () => {
    // A hook killed without a chance to withdraw (SIGKILL) leaves its approval open.
    const proc = Bun.spawn(
      [process.execPath, `${import.meta.dir}/../../src/main.ts`, 'hook', 'claude'],
      {
        env: {
          ...process.env,
          ...live.env,
          HOME: live.cli.home,
          XDG_CONFIG_HOME: `${live.cli.home}/config`,
        },
        stdin: new TextEncoder().encode(JSON.stringify(bash)),
      },
    )
    let open: Message | undefined
    const pendingDir = join(live.cli.home, '.local', 'state', 'hark', 'pending')
    // Killed only once the hook has noted its question (after the server answered the send).
    while (!open || !existsSync(pendingDir) || readdirSync(pendingDir).length === 0) {
      open = (await live.server.person.openAsks()).asks.find(
        (m) => (m.body.blocks?.[0] as Block | undefined)?.session === 'session-3',
      )
      await Bun.sleep(5)
    }
    proc.kill('SIGKILL')
    await proc.exited

    // Another tool of the session ran: this approval stays.
    const other = {
      ...bash,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: {},
      tool_use_id: 't1',
    }
    await live.cli.run(['hook', 'claude'], { env: live.env, stdin: JSON.stringify(other) })
    expect((await live.server.agent.ask(open.id)).message.ask?.status).toBe('open')

    const ran = await live.cli.run(['hook', 'claude'], {
      env: live.env,
      stdin: JSON.stringify({ ...other, tool_input: bash.tool_input }),
    })
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
    expect((await live.server.agent.ask(open.id)).message.ask).toMatchObject({
      status: 'cancelled',
      reason: 'answered in the terminal',
    })
    expect(open.ask?.request_hash).toBe(
      createHash('sha256')
        .update('{"input":{"command":"make release","description":"Release"},"tool":"Bash"}')
        .digest('hex'),
    )
  })

  test('an AskUserQuestion answered in the terminal: PostToolUse (with the answers) withdraws it', async () => {
    const questions = [
      {
        question: 'Ship it?',
        header: 'Ship',
        multiSelect: false,
        options: [
          { label: 'Yes', description: '' },
          { label: 'No', description: '' },
        ],
      },
    ]
    const event = permissionRequest('AskUserQuestion', { questions }, { session_id: 'session-4' })
    const run = startHook(live, ['claude'], event)
    const asked = await run.asked()
    const pendingDir = join(live.cli.home, '.local', 'state', 'hark', 'pending')
    while (!existsSync(pendingDir) || readdirSync(pendingDir).length === 0) await Bun.sleep(5)
    // The input Claude Code reports after the tool ran carries the answers given there.
    const post = {
      ...event,
      hook_event_name: 'PostToolUse',
      tool_input: { questions, answers: { 'Ship it?': 'Yes' } },
      tool_response: {},
      tool_use_id: 't2',
    }
    const ran = await live.cli.run(['hook', 'claude'], {
      env: live.env,
      stdin: JSON.stringify(post),
    })
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
    expect((await live.server.agent.ask(asked.id)).message.ask).toMatchObject({
      status: 'cancelled',
      reason: 'answered in the terminal',
    })
    // The hook still waiting for the phone ends deciding nothing.
    expectNoDecision(await run.finished, /the question was cancelled/)
  })

  test('with nothing open, PostToolUse makes no network call at all', async () => {
    const env = { HARK_URL: await deadUrl(), HARK_TOKEN: live.server.agentToken }
    const post = {
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Read',
      tool_input: { file_path: '/x' },
    }
    const ran = await live.cli.run(['hook', 'claude'], { env, stdin: JSON.stringify(post) })
    // A dead server would have been one line on stderr, had the hook tried to reach it.
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, '', ''])
  })
})
