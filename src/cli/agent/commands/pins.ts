import type { ProgressSpec } from '../../../agent/bodies.ts'
import { pinMessage, showProgress } from '../../../agent/messages.ts'
import { flagString } from '../../args.ts'
import { type AgentCommand, positionals } from '../command.ts'
import { pinLine } from '../format.ts'
import { BODY_HELP, BODY_VALUED, bodySpecFromFlags, silentFlag } from './messages.ts'

export const pin: AgentCommand = {
  name: 'pin',
  summary: 'keep a pinned status message under KEY',
  help: `Usage: hark pin KEY [TEXT...] [flags]

Creates or replaces the pinned message KEY (letters, digits, . _ - :), shown above the
conversation in the app: a build status, a checklist. Replacing keeps its place.

${BODY_HELP}
  --silent             no push notification when the pin is new`,
  valued: BODY_VALUED,
  booleans: ['silent'],
  async run(c) {
    const [key, ...words] = positionals(c, 1, Number.POSITIVE_INFINITY, 'hark pin KEY TEXT...')
    const spec = await bodySpecFromFlags(c, words)
    const answer = await pinMessage(c.session().client, key as string, spec, silentFlag(c))
    c.io.result(answer, `pinned ${answer.pin.key} (${answer.pin.message.id})`)
    return 0
  },
}

export const unpin: AgentCommand = {
  name: 'unpin',
  summary: 'remove the pinned message KEY',
  help: `Usage: hark unpin KEY

Removes the pinned message KEY.`,
  async run(c) {
    const [key] = positionals(c, 1, 1, 'hark unpin KEY')
    const answer = await c.session().client.unpin(key as string)
    c.io.result(answer, `unpinned ${key}`)
    return 0
  },
}

export const pins: AgentCommand = {
  name: 'pins',
  summary: 'list the pinned messages',
  help: `Usage: hark pins

Lists this agent's pinned messages, one per line: KEY and its text. With --json: {"pins":[...]}.`,
  async run(c) {
    positionals(c, 0, 0, 'hark pins')
    const answer = await c.session().client.pins()
    c.io.result(answer, answer.pins.map(pinLine).join('\n'))
    return 0
  },
}

export const progress: AgentCommand = {
  name: 'progress',
  summary: 'show a progress bar, pinned under KEY',
  help: `Usage: hark progress KEY VALUE [--max N] [--label LABEL] [--title TITLE]

Pins a progress bar under KEY, or moves it: "hark progress build 40 --max 120 --label tests".
Silent: a moving bar never sends a notification. Remove it with "hark unpin KEY".

  --max N          the value of a full bar (without it, VALUE is shown alone)
  --label LABEL    the text beside the bar
  --title TITLE    a title above it`,
  valued: ['max', 'label', 'title'],
  async run(c) {
    const [key, value] = positionals(c, 2, 2, 'hark progress KEY VALUE [--max N] [--label L]')
    const spec: ProgressSpec = {
      value: value as string,
      max: flagString(c.args, 'max'),
      label: flagString(c.args, 'label'),
      title: flagString(c.args, 'title'),
    }
    const answer = await showProgress(c.session().client, key as string, spec)
    c.io.result(answer, `${answer.pin.key}: ${value}${spec.max ? ` / ${spec.max}` : ''}`)
    return 0
  },
}
