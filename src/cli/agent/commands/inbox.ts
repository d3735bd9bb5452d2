import { Inbox } from '../../../agent/inbox.ts'
import { ackState } from '../../../agent/messages.ts'
import { UsageError } from '../../../core/errors.ts'
import { type AgentCommand, positionals, secondsFlag } from '../command.ts'
import { messageLine } from '../format.ts'

export const inbox: AgentCommand = {
  name: 'inbox',
  summary: "read the person's messages",
  help: `Usage: hark inbox [--follow] [--peek] [--wait SECONDS] [--all]

Prints the messages the person wrote to this agent since the last "hark inbox" (messages the
agent already marked working or done are left out), and marks them seen. With --json:
{"messages":[...],"cursor":N}; with --follow, one message per line.

  --follow           keep reading: print each new message as it arrives, until Ctrl-C
  --peek             do not mark them seen (and show them again next time)
  --wait SECONDS     when there is nothing new, wait up to this long for a message
  --all              start from the channel's first message, not from the last read`,
  valued: ['wait'],
  booleans: ['follow', 'peek', 'all'],
  async run(c) {
    positionals(c, 0, 0, 'hark inbox [flags]')
    const { args, io } = c
    const reader = new Inbox(c.session(), c.env, {
      peek: args.flags.has('peek'),
      all: args.flags.has('all'),
      onWarning: io.note,
    })
    if (args.flags.has('follow')) {
      if (args.flags.has('wait')) throw new UsageError('--follow waits already; drop --wait')
      for (;;) {
        const batch = await reader.next({ deadline: Number.POSITIVE_INFINITY, onOutage: io.note })
        for (const m of batch) io.item(m, messageLine(m))
      }
    }
    const messages = await reader.read(secondsFlag(args, 'wait') ?? 0, io.note)
    if (messages.length === 0 && !io.json) io.note('no new messages')
    io.result({ messages, cursor: reader.place }, messages.map(messageLine).join('\n'))
    return 0
  },
}

export const ack: AgentCommand = {
  name: 'ack',
  summary: "acknowledge a person's message: seen, working or done",
  help: `Usage: hark ack ID seen|working|done

Tells the person where their message stands: seen, working (on it) or done. Any order is
allowed ("done" then "working" reopens it).`,
  async run(c) {
    const [id, state] = positionals(c, 2, 2, 'hark ack ID seen|working|done')
    const checked = ackState(state as string)
    const answer = await c.session().client.ack(id as string, checked)
    c.io.result(answer, `${answer.message.id}: ${state}`)
    return 0
  },
}
