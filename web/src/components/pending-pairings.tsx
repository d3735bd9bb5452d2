import { fromNow, stamp } from '../lib/format.ts'
import { usePendingPairings } from '../lib/pairings.ts'
import { useSession } from '../lib/session.ts'
import type { Pairing } from '../lib/types.ts'

/**
 * "Asking to connect": the `hark init` requests waiting for the owner's answer, live, each with
 * where it comes from (the machine's name, its address, when), so the person can tell their
 * own terminal's request from anyone else's. Home links each to its pairing page; the setup
 * wizard opens it in place (`onPick`). Hidden when none waits, and for anyone but the owner.
 */
export function PendingPairings({ onPick }: { onPick?: (code: string) => void }) {
  const { me } = useSession()
  const pending = usePendingPairings(me?.is_owner === true)
  if (!pending || pending.length === 0) return null
  return (
    <section class="pending-pairings" aria-labelledby="pending-pairings-head">
      <h2 id="pending-pairings-head">
        Asking to connect <span class="badge count">{pending.length}</span>
      </h2>
      <ul>
        {pending.map((p) => (
          <li key={p.user_code}>
            {onPick ? (
              <button type="button" class="pending-pairing" onClick={() => onPick(p.user_code)}>
                <PairingLine pairing={p} />
              </button>
            ) : (
              <a class="pending-pairing" href={`/pair?code=${encodeURIComponent(p.user_code)}`}>
                <PairingLine pairing={p} />
              </a>
            )}
          </li>
        ))}
      </ul>
    </section>
  )
}

function PairingLine({ pairing }: { pairing: Pairing }) {
  return (
    <>
      <span class="pending-pairing-top">
        <span class="pending-pairing-kind">hark init</span>
        <span class="pending-pairing-host">{pairing.label ?? 'A new agent'}</span>
        <time class="channel-time" dateTime={new Date(pairing.created_at).toISOString()}>
          {fromNow(pairing.created_at)}
        </time>
      </span>
      <span class="pending-pairing-origin">
        {originText(pairing)} · code <span class="code">{pairing.user_code}</span>
      </span>
    </>
  )
}

/** "from ada-laptop (192.0.2.4)": the name the machine gave, and the address the server saw. */
export function originText(p: Pairing): string {
  const where = p.address ? ` (${p.address})` : ''
  return p.host ? `from ${p.host}${where}` : `from an unnamed machine${where}`
}

/**
 * Where a pairing comes from, in full, on the page that approves it: the machine's name is
 * what it says of itself (anyone may start a pairing and give any name), the address is what
 * the server saw, and the time is when it asked.
 */
export function PairingOrigin({ pairing }: { pairing: Pairing }) {
  return (
    <dl class="pairing-origin">
      <div>
        <dt>Machine</dt>
        <dd>{pairing.host ?? 'not named (an older hark init)'}</dd>
      </div>
      <div>
        <dt>Address</dt>
        <dd>{pairing.address ?? 'not known'}</dd>
      </div>
      <div>
        <dt>Asked</dt>
        <dd>
          <time dateTime={new Date(pairing.created_at).toISOString()}>
            {fromNow(pairing.created_at)}, {stamp(pairing.created_at)}
          </time>
        </dd>
      </div>
    </dl>
  )
}
