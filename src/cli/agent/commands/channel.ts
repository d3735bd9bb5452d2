import { describeFailure, EXIT } from '../../../agent/failures.ts'
import { updateConfig } from '../../../agent/profiles.ts'
import { agentClientFor, resolveConnection } from '../../../agent/session.ts'
import type { Channel } from '../../../channels/schema.ts'
import { type AgentCommand, positionals } from '../command.ts'

interface StatusReport {
  profile: string
  url: string | null
  reachable: boolean
  authenticated: boolean
  channel: Channel | null
  error?: string
}

export const status: AgentCommand = {
  name: 'status',
  summary: 'check the connection: server reachable, token valid, channel name',
  help: `Usage: hark status

Checks the profile's connection: that the server answers, that the token is valid, and which
channel it belongs to. Exit code 0 when all is well, 1 when the server cannot be reached, 4
when there is no token or the server refuses it.`,
  async run(c) {
    positionals(c, 0, 0, 'hark status')
    const conn = resolveConnection(c.env, c.profile)
    const report: StatusReport = {
      profile: c.profile,
      url: conn.url ?? null,
      reachable: false,
      authenticated: false,
      channel: null,
    }
    const finish = (code: number, error?: string) => {
      if (error) {
        report.error = error
        c.io.note(error)
      }
      const lines = [
        `profile  ${report.profile}`,
        `server   ${report.url ?? '(none)'}${report.url ? (report.reachable ? ' (reachable)' : ' (unreachable)') : ''}`,
        `token    ${conn.token ? (report.authenticated ? 'valid' : 'not accepted') : '(none)'}`,
      ]
      if (report.channel) lines.push(`channel  "${report.channel.label}" (${report.channel.id})`)
      c.io.result(report, lines.join('\n'))
      return code
    }
    if (!conn.url) {
      return finish(EXIT.notAuthenticated, 'not connected: run "hark init URL" or "hark join LINK"')
    }
    // One attempt: status reports an outage rather than sitting through retries.
    const client = agentClientFor(conn.url, conn.token, c.io.note, 1)
    try {
      await client.health()
      report.reachable = true
    } catch (error) {
      return finish(EXIT.error, describeFailure(error).message)
    }
    if (!conn.token)
      return finish(EXIT.notAuthenticated, 'no token: run "hark init" or "hark join"')
    try {
      report.channel = (await client.channel()).channel
      report.authenticated = true
    } catch (error) {
      const failure = describeFailure(error)
      return finish(failure.exitCode, failure.message)
    }
    return finish(EXIT.ok)
  },
}

export const rename: AgentCommand = {
  name: 'rename',
  summary: 'rename this agent (the channel name the person sees)',
  help: `Usage: hark rename LABEL

Renames this agent's channel as the person sees it (1 to 100 characters).`,
  async run(c) {
    const words = positionals(c, 1, Number.POSITIVE_INFINITY, 'hark rename LABEL')
    const session = c.session()
    const answer = await session.client.rename(words.join(' '))
    // Keep the stored name in step, when this profile's channel is the one renamed.
    if (resolveConnection(c.env, c.profile).stored.channel?.id === answer.channel.id) {
      updateConfig(c.env, (config) => {
        const channel = config.profiles[c.profile]?.channel
        if (channel) channel.label = answer.channel.label
      })
    }
    c.io.result(answer, `renamed to "${answer.channel.label}"`)
    return 0
  },
}
