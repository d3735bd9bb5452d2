import { hostname } from 'node:os'
import type { IssuedToken } from '../../../agent/client.ts'
import { CliError } from '../../../agent/failures.ts'
import { updateConfig } from '../../../agent/profiles.ts'
import {
  agentClientFor,
  enrolmentClient,
  normaliseUrl,
  resolveConnection,
} from '../../../agent/session.ts'
import { describeKeys, pin, reportedApprovers } from '../../../agent/trust.ts'
import { pollUntil } from '../../../agent/waiting.ts'
import { UsageError } from '../../../core/errors.ts'
import { cleanHost } from '../../../core/labels.ts'
import { terminalQr, wantsQr } from '../../../core/terminal-qr.ts'
import { flagString } from '../../args.ts'
import { type AgentCommand, type CommandContext, positionals } from '../command.ts'

/**
 * Stores a new token in the profile, replacing whatever connection it had, and pins the
 * person's passkeys as the channel reports them now (trust on first use): the keys every signed
 * answer is checked against from then on.
 */
async function remember(c: CommandContext, url: string, issued: IssuedToken): Promise<number> {
  updateConfig(c.env, (config) => {
    config.profiles[c.profile] = { url, token: issued.token, channel: issued.channel }
  })
  let keys = 0
  try {
    const approvers = await reportedApprovers(agentClientFor(url, issued.token, c.io.note))
    pin(c.env, c.profile, approvers)
    keys = approvers.keys.length
    if (keys > 0)
      c.io.tell(
        `Pinned the person's passkeys (check them in the app):\n${describeKeys(approvers.keys)}`,
      )
    else c.io.note('the person has no passkey yet: approvals cannot be signed (see "hark keys")')
  } catch (error) {
    c.io.note(
      `could not pin the person's passkeys (${(error as Error).message}); run "hark keys refresh"`,
    )
  }
  c.io.result(
    { profile: c.profile, url, channel: issued.channel, keys },
    `connected to ${url} as "${issued.channel.label}" (profile ${c.profile})`,
  )
  return 0
}

/**
 * This machine's name, sent with the pairing: the app shows it beside the code. A name the
 * server would refuse (odd characters, too long) is left out rather than failing `hark init`.
 */
function machineName(): string | undefined {
  try {
    return cleanHost(hostname())
  } catch {
    return undefined
  }
}

export const init: AgentCommand = {
  name: 'init',
  summary: 'connect this machine: pair with the server, approved in the app',
  help: `Usage: hark init URL [--label LABEL] [--qr | --no-qr]

Pairs this machine with the Hark server at URL, like "gh auth login": prints a link and a
short code on stderr, and waits while you approve the code in the Hark app (logged in). The
app shows the request with this machine's host name, its address and the time. The new
channel's token is stored in the profile ($XDG_CONFIG_HOME/hark/config.json, mode 0600).

  --label LABEL   the name the app suggests for this agent (you can change it when approving)
  --qr, --no-qr   print the link as a QR code too, to open it on a phone (default: when
                  stderr is a terminal and URL is not localhost)`,
  valued: ['label'],
  booleans: ['qr', 'no-qr'],
  async run(c) {
    const [raw] = positionals(c, 1, 1, 'hark init URL [--label LABEL]')
    const url = normaliseUrl(raw as string)
    const client = enrolmentClient(url, c.io.note)
    const start = await client.startPairing(flagString(c.args, 'label'), machineName())
    const link = start.verification_uri_complete
    // Scanned with the phone that holds the person's passkey, the link opens the app there.
    const qr = wantsQr(c.args.flags, process.stderr, link) ? `\n${terminalQr(link)}` : ''
    c.io.tell(
      `To connect this agent, open\n\n  ${link}\n${qr}\n` +
        `and approve the code ${start.user_code}. Waiting for approval ` +
        `(the code expires in ${Math.round(start.expires_in / 60)} minutes)…`,
    )
    const result = await pollUntil(
      async (wait, signal) => {
        const r = await client.pollPairing(start.device_code, wait, signal)
        return r.status === 'pending' ? undefined : r
      },
      { deadline: Date.now() + start.expires_in * 1000, onOutage: c.io.note },
    )
    if (result?.status === 'approved') return remember(c, url, result)
    if (result?.status === 'denied') throw new CliError('the pairing was denied in the app')
    throw new CliError('the pairing code expired before it was approved; run "hark init" again')
  },
}

/**
 * `https://host[/prefix]/join#CODE` → the server's URL and the code. A bare code needs the URL
 * from `--url`, `HARK_URL` or the profile.
 */
export function parseJoinLink(link: string, fallbackUrl: string | undefined) {
  const m = /^(https?:\/\/[^#]*?)\/join\/?#(.+)$/.exec(link.trim())
  if (m) return { url: normaliseUrl(m[1] as string), code: m[2] as string }
  if (/^[A-Za-z0-9]+$/.test(link.trim()) && fallbackUrl) {
    return { url: normaliseUrl(fallbackUrl), code: link.trim() }
  }
  throw new UsageError(
    `"${link}" is not a join link (expected https://HOST/join#CODE; a bare code needs --url)`,
  )
}

export const join: AgentCommand = {
  name: 'join',
  summary: 'connect this machine with a join link made in the app',
  help: `Usage: hark join LINK [--url URL]

Redeems a join link made in the Hark app ("Connect an agent"): single use, valid 15 minutes.
The link gives a new channel, or a new token for an existing one (its old token stops working).
The token is stored in the profile.

  --url URL   the server, when LINK is only the code`,
  valued: ['url'],
  async run(c) {
    const [link] = positionals(c, 1, 1, 'hark join LINK')
    const known = resolveConnection(c.env, c.profile).url
    const { url, code } = parseJoinLink(link as string, flagString(c.args, 'url') ?? known)
    return remember(c, url, await enrolmentClient(url, c.io.note).join(code))
  },
}

export const logout: AgentCommand = {
  name: 'logout',
  summary: "forget the profile's token",
  help: `Usage: hark logout

Removes the profile's URL and token from the config file. The token itself stays valid until
it is revoked in the app (Settings → Tokens); HARK_TOKEN, when set, still applies.`,
  async run(c) {
    positionals(c, 0, 0, 'hark logout')
    let removed = false
    updateConfig(c.env, (config) => {
      removed = config.profiles[c.profile] !== undefined
      delete config.profiles[c.profile]
    })
    if (c.env.HARK_TOKEN) c.io.note('HARK_TOKEN is set in the environment and still applies')
    c.io.result(
      { profile: c.profile, removed },
      removed ? `logged out (profile ${c.profile})` : `profile ${c.profile} was not connected`,
    )
    return 0
  },
}
