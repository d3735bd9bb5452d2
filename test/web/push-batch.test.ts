import { describe, expect, test } from 'bun:test'
import { webTest } from './harness.ts'
import { notifications, workerPage } from './push-fixture.ts'

/**
 * Several approvals waiting, from two agents: the service worker shows one notification that
 * says how many and opens the Waiting-on-you list, not a stack of cards. A destructive one stays
 * on its own (marked, kept on screen); a plain message is not folded in.
 */
const web = webTest({ pushAllowHosts: ['127.0.0.1'] })

const approval = (id: string, agent: string, command: string, danger = false) =>
  JSON.stringify({
    kind: 'message',
    channel_id: `ch_${agent}`,
    channel_label: agent,
    message_id: id,
    title: 'Claude Code wants to run a command',
    text: command,
    url: `/c/ch_${agent}#${id}`,
    actions: [
      { action: 'allow', title: 'Allow…', url: `/c/ch_${agent}?act=allow#${id}` },
      { action: 'deny', title: 'Deny', answer: { decision: 'deny' } },
    ],
    capability: 'hark_cap_x',
    ...(danger ? { danger: true } : {}),
  })

describe('one notification for several waiting approvals', () => {
  test('three approvals from two agents: one notification says 3; destructive and plain ones stay apart', async () => {
    const { context, sw, deliver } = await workerPage(web)
    await deliver(approval('msg_a', 'Build bot', 'npm test'))
    expect((await notifications(sw)).map((n) => n.tag)).toEqual(['msg_a'])
    await deliver(approval('msg_b', 'Docs bot', 'make site'))
    await deliver(approval('msg_c', 'Build bot', 'npm run lint'))
    await deliver(approval('msg_d', 'Build bot', 'rm -rf dist', true))
    await deliver(
      JSON.stringify({
        kind: 'message',
        channel_id: 'ch_x',
        channel_label: 'Docs bot',
        message_id: 'msg_plain',
        title: null,
        text: 'Done with the docs',
        url: '/c/ch_x#msg_plain',
      }),
    )
    const shown = await notifications(sw)
    expect(shown.map((n) => n.tag).sort()).toEqual(['hark-approvals-waiting', 'msg_d', 'msg_plain'])
    const batch = shown.find((n) => n.tag === 'hark-approvals-waiting')
    expect(batch).toMatchObject({
      title: 'Hark',
      body: '3 approvals wait on you\nLatest: Claude Code wants to run a command: npm run lint',
      actions: [],
    })
    await context.close()
  }, 60_000)
})
