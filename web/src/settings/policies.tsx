import { ruleText } from '../../../src/shared/policy.ts'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { fromNow } from '../lib/format.ts'
import { claimOfRecord, listPolicies, type PolicyRecord, revokePolicy } from '../lib/policies.ts'
import { ListRow, SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/**
 * The approval rules the person signed (docs/security.md "Approval policies"): each in words,
 * how often an agent used it and when last, when it expires; Revoke signs the revocation with
 * one passkey prompt. Every rule expires within 30 days, revoked or not.
 */
export function PolicySettings() {
  const { items, error, reload } = useList(listPolicies)
  const [revoke, , revokeError] = useAction(async (p: PolicyRecord) => {
    await revokePolicy(p)
    await reload()
  })
  return (
    <SettingsCard id="policies" title="Approval rules">
      <ErrorNote error={error ?? revokeError} />
      {items?.length === 0 && (
        <p class="muted">
          None yet. On an approval, “Always allow…” or “Never allow…” makes one, signed with your
          passkey.
        </p>
      )}
      <ul class="rows">
        {items?.map((p) => {
          const claim = claimOfRecord(p)
          return (
            <ListRow
              key={p.id}
              title={ruleText(claim.rule)}
              detail={
                <>
                  {p.uses === 0
                    ? 'Not used yet'
                    : `Used ${p.uses} ${p.uses === 1 ? 'time' : 'times'}, last ${fromNow(p.last_used_at ?? p.created_at)}`}
                  {' · '}
                  {p.revoked_at ? 'Revoked' : `Expires ${fromNow(p.expires_at)}`}
                  {claim.rule.message ? ` · “${claim.rule.message}”` : ''}
                </>
              }
            >
              {!p.revoked_at && (
                <Button variant="quiet" onClick={() => revoke(p)}>
                  Revoke
                </Button>
              )}
            </ListRow>
          )
        })}
      </ul>
    </SettingsCard>
  )
}
