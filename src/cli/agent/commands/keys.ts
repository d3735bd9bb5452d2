import { EXIT } from '../../../agent/failures.ts'
import { describeKeys, pinnedApprovers, refreshKeys } from '../../../agent/trust.ts'
import { UsageError } from '../../../core/errors.ts'
import { fingerprint } from '../../../shared/fingerprint.ts'
import { type AgentCommand, positionals, secondsFlag } from '../command.ts'

const DEFAULT_REFRESH_WAIT_S = 300

export const keys: AgentCommand = {
  name: 'keys',
  summary: "the person's passkeys this agent trusts to sign answers; refresh them",
  help: `Usage: hark keys [refresh] [--timeout SECONDS]

Lists the passkeys pinned in this profile: the person's keys, as the channel reported them when
this machine was connected ("hark init", "hark join"), with fingerprints to compare with the app
(Settings → Passkeys). Signed approvals are checked against these keys, here, whatever the
server says.

  refresh          take the channel's current keys: a key removed in the app is dropped; a new
                   key is taken only when the person approves it in the app, signed with a key
                   already pinned (with none pinned yet, they are taken on first use)
  --timeout SECS   how long refresh waits for that approval (default ${DEFAULT_REFRESH_WAIT_S})`,
  valued: ['timeout'],
  async run(c) {
    const [verb] = positionals(c, 0, 1, 'hark keys [refresh]')
    if (verb === undefined) {
      const pinned = pinnedApprovers(c.env, c.profile)
      const list = (pinned?.keys ?? []).map((k) => ({ ...k, fingerprint: fingerprint(k) }))
      c.io.result(
        { profile: c.profile, rp_id: pinned?.rp_id, origin: pinned?.origin, keys: list },
        pinned && list.length > 0
          ? `${pinned.origin} (profile ${c.profile}):\n${describeKeys(pinned.keys)}`
          : `no passkeys pinned (profile ${c.profile}); run "hark keys refresh"`,
      )
      return EXIT.ok
    }
    if (verb !== 'refresh') throw new UsageError(`unknown keys command "${verb}" (try refresh)`)
    const waitMs = secondsFlag(c.args, 'timeout') ?? DEFAULT_REFRESH_WAIT_S * 1000
    const session = c.session()
    const outcome = await refreshKeys(session.client, c.env, c.profile, waitMs, () =>
      c.io.note('approve the new passkey in the app, with a passkey this agent already trusts'),
    )
    if (outcome.status === 'refused') {
      c.io.result({ status: 'refused', reason: outcome.reason }, undefined)
      c.io.note(`keys unchanged: ${outcome.reason}`)
      return EXIT.error
    }
    const words = {
      unchanged: 'the pinned keys are current',
      'first-use': 'pinned on first use',
      removed: 'dropped the keys removed in the app',
      approved: 'took the new keys, approved with a pinned passkey',
    }
    c.io.result(
      {
        status: outcome.status,
        keys: outcome.pinned.keys.map((k) => ({ ...k, fingerprint: fingerprint(k) })),
      },
      `${words[outcome.status]}:\n${describeKeys(outcome.pinned.keys)}`,
    )
    return EXIT.ok
  },
}
