import { ErrorNote } from '../components/ui.tsx'
import { listPolicies } from '../lib/policies.ts'
import { SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/**
 * The way from Settings to the Policies screen (`/policies`, screens/policies.tsx), which lists
 * each rule and revokes it: here only how many are in force.
 */
export function PolicySettings() {
  const { items, error } = useList(listPolicies)
  const live = items?.filter((p) => !p.revoked_at).length
  return (
    <SettingsCard id="policies" title="Approval rules">
      <ErrorNote error={error} />
      <p class="muted">
        {live === undefined
          ? 'Rules you signed decide matching approvals without asking you.'
          : live === 0
            ? 'No rule in force. On an approval, “Always allow…” or “Never allow…” makes one, signed with your passkey.'
            : `${live} ${live === 1 ? 'rule' : 'rules'} in force, each signed with your passkey.`}
      </p>
      <p>
        <a class="btn" href="/policies">
          Your approval rules
        </a>
      </p>
    </SettingsCard>
  )
}
