import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_HOOK_WAIT_S } from '../../src/cli/harness/hook.ts'
import { fromNow } from '../../web/src/lib/format.ts'
import { expectNoDecision, hookAnswered, permissionRequest, startHook } from './hooks.ts'
import { liveCli } from './live.ts'

/**
 * How long an approval stays open is one number (issue 28, item 4): the card said "Expires in
 * 10 minutes" (the question expired 30 s after the hook stopped waiting) while the README said
 * 9. The hook's wait, the question's expiry, the card's words and the README are now one.
 */
const live = liveCli()
const bash = permissionRequest('Bash', { command: 'make test', description: 'Run the tests' })
const minutes = DEFAULT_HOOK_WAIT_S / 60

describe('an approval’s expiry', () => {
  test('the question expires when the hook stops waiting, and the card says so', async () => {
    const { question } = await hookAnswered(live, ['claude'], bash, { decision: 'deny' })
    const ask = question.ask as { expires_at: number }
    expect(ask.expires_at - question.created_at).toBe(DEFAULT_HOOK_WAIT_S * 1000)
    // What the approval card prints ("Expires {fromNow(expires_at)}"), as it is first shown.
    const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
    expect(fromNow(ask.expires_at, question.created_at)).toBe(relative.format(minutes, 'minute'))
  })

  test('the README gives the same number', () => {
    const readme = readFileSync(join(import.meta.dir, '..', '..', 'README.md'), 'utf8')
    expect(Number.isInteger(minutes)).toBe(true)
    expect(readme).toContain(`**No answer within ${minutes} minutes**`)
    expect(readme.match(/No answer within \d+ minutes/g)).toEqual([
      `No answer within ${minutes} minutes`,
    ])
  })

  test('with --wait N the question expires after N s; the hook says no answer came', async () => {
    const run = startHook(live, ['claude', '--wait', '1'], bash)
    const question = await run.asked()
    expect((question.ask as { expires_at: number }).expires_at - question.created_at).toBe(1000)
    expectNoDecision(await run.finished, /^hark hook: no answer within 1 s; the question expired/)
    expect((await live.server.agent.ask(question.id)).message.ask?.status).toBe('expired')
  })
})
