import { type PolicyClaim, type PolicyWhere, ruleText } from '../../../src/shared/policy.ts'
import { Button, ErrorNote, Spinner, useAction } from '../components/ui.tsx'
import { useChannels } from '../lib/channels.ts'
import { fromNow, fullDate } from '../lib/format.ts'
import { claimOfRecord, listPolicies, type PolicyRecord, revokePolicy } from '../lib/policies.ts'
import type { ChannelSummary } from '../lib/types.ts'
import { useList } from '../settings/use-list.ts'

/**
 * The Policies screen (`/policies`, docs/security.md "Approval policies"): every rule the person
 * signed, each in words with where it applies (which agent, which directory, or all), when it
 * expires, how often an agent used it and when last. Revoke is one tap: the passkey signs the
 * revocation, and each agent that reads it refuses the rule from then on. Reached from Settings
 * and from an approval card's "Your rules" link.
 */
export function Policies() {
  const { items, error, reload } = useList(listPolicies)
  const channels = useChannels()
  const live = items?.filter((p) => !p.revoked_at) ?? []
  const revoked = items?.filter((p) => p.revoked_at) ?? []
  return (
    <main class="page policies">
      <p>
        <a href="/settings">‹ Settings</a>
      </p>
      <h1>Approval rules</h1>
      <p class="lead">
        Rules you signed with your passkey. An agent decides what a rule covers without asking you,
        and leaves one quiet line in its thread. Every rule ends within 30 days.
      </p>
      <ErrorNote error={error} />
      {items === null ? (
        !error && <Spinner label="Loading your rules" />
      ) : items.length === 0 ? (
        <p class="empty">
          None yet. On an approval, “Always allow…” or “Never allow…” makes one, signed with your
          passkey.
        </p>
      ) : (
        <>
          <ul class="policy-list" aria-label="Your rules">
            {live.map((p) => (
              <PolicyItem key={p.id} policy={p} channels={channels} onChange={reload} />
            ))}
          </ul>
          {live.length === 0 && <p class="empty">No rule in force.</p>}
          {revoked.length > 0 && (
            <>
              <h2>Revoked</h2>
              <ul class="policy-list" aria-label="Revoked rules">
                {revoked.map((p) => (
                  <PolicyItem key={p.id} policy={p} channels={channels} onChange={reload} />
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </main>
  )
}

/** Where a rule applies, with the agent's name where the app knows it. */
export function whereText(where: PolicyWhere, channels: ChannelSummary[] | null): string {
  if (where.kind === 'all') return 'All your agents'
  const name = channels?.find((c) => c.id === where.channel_id)?.label ?? 'An agent'
  return where.kind === 'cwd' ? `${name}, in ${where.cwd} and below` : name
}

/** "Used 3 times, last 5 minutes ago", or "Not used yet". */
export const useText = (p: PolicyRecord) =>
  p.uses === 0
    ? 'Not used yet'
    : `Used ${p.uses} ${p.uses === 1 ? 'time' : 'times'}, last ${fromNow(p.last_used_at ?? p.created_at)}`

function PolicyItem({
  policy: p,
  channels,
  onChange,
}: {
  policy: PolicyRecord
  channels: ChannelSummary[] | null
  onChange: () => Promise<void>
}) {
  const claim: PolicyClaim = claimOfRecord(p)
  const rule = claim.rule
  const [revoke, busy, error] = useAction(async () => {
    await revokePolicy(p)
    await onChange()
  })
  const words = ruleText(rule)
  return (
    <li class={`policy${rule.effect === 'deny' ? ' deny' : ''}${p.revoked_at ? ' revoked' : ''}`}>
      <p class="policy-words">{words}</p>
      <dl class="policy-facts">
        <dt>Applies to</dt>
        <dd>{whereText(rule.where, channels)}</dd>
        {rule.message && (
          <>
            <dt>Message to the agent</dt>
            <dd>“{rule.message}”</dd>
          </>
        )}
        <dt>{p.revoked_at ? 'Revoked' : 'Expires'}</dt>
        <dd title={fullDate(p.revoked_at ?? p.expires_at)}>
          {fromNow(p.revoked_at ?? p.expires_at)}
        </dd>
        <dt>Use</dt>
        <dd>{useText(p)}</dd>
      </dl>
      {!p.revoked_at && (
        <Button
          variant="danger"
          busy={busy}
          aria-label={`Revoke: ${words}`}
          onClick={() => revoke()}
        >
          Revoke
        </Button>
      )}
      <ErrorNote error={error} />
    </li>
  )
}
