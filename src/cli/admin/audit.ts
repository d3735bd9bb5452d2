import { approverKey } from '../../access/passkeys/keys.ts'
import { checkAnswerProof } from '../../agent/proof.ts'
import { UsageError } from '../../core/errors.ts'
import { type AuditEntry, chainHash } from '../../messages/asks/audit/service.ts'
import { type AuditRow, GENESIS_HASH } from '../../messages/asks/audit/store.ts'
import type { Provisioning } from '../../people/service.ts'
import { base64url } from '../../shared/proof.ts'
import { flagString } from '../args.ts'
import { type AdminCommand, withRecords } from './command.ts'

/**
 * `hark admin audit verify` and `export`: the approval audit log (src/messages/asks/audit). Verify walks
 * the chain from its first row (each hash must be SHA-256 of the previous hash, a newline and the
 * row's entry) and checks every signed decision with the passkey's public key: the claim rebuilt
 * from the entry, the signature, user verification, and an origin whose host is the rp id the
 * authenticator hashed. Export writes the rows as JSON lines, for checking elsewhere.
 */
const PAGE = 1000

async function* rows(p: Provisioning): AsyncGenerator<AuditRow> {
  let after = 0
  for (;;) {
    const page = await p.store.audit.page(after, PAGE)
    yield* page
    if (page.length < PAGE) return
    after = (page.at(-1) as AuditRow).seq
  }
}

/** The signature of one signed entry, or why it does not hold ("unknown" when the key is gone). */
async function checkEntry(p: Provisioning, entry: AuditEntry): Promise<'ok' | 'unknown' | string> {
  const proof = entry.proof
  if (!proof) return 'ok'
  const row = await p.store.passkeys.byId(proof.credential_id)
  const key = row ? approverKey(row) : undefined
  if (!key) return 'unknown'
  let origin: string
  try {
    const data = JSON.parse(new TextDecoder().decode(base64url.decode(proof.client_data_json)))
    origin = String(data.origin)
  } catch {
    return 'the proof is malformed'
  }
  const check = checkAnswerProof(
    proof,
    {
      channel_id: entry.channel_id,
      message_id: entry.message_id,
      request_hash: entry.request_hash,
      answer: entry.answer,
      approval: entry.tool !== undefined,
      asked_at: Number.NEGATIVE_INFINITY,
      now: Number.POSITIVE_INFINITY,
    },
    { rp_id: new URL(origin).hostname, origin, keys: [key] },
  )
  return check.ok ? 'ok' : check.reason
}

export const auditVerify: AdminCommand = {
  name: 'audit verify',
  summary: 'checks the approval audit log: its hash chain and every signature in it',
  help: 'hark admin audit verify [--data DIR]',
  valued: ['data', 'config', 'database-url'],
  async run(c) {
    const report = await withRecords(c, async (p) => {
      let prev = GENESIS_HASH
      let count = 0
      let signed = 0
      let unknown = 0
      const problems: string[] = []
      for await (const row of rows(p)) {
        count++
        if (row.prev_hash !== prev || row.hash !== chainHash(prev, row.entry)) {
          problems.push(`row ${row.seq}: the chain breaks here (changed, removed or inserted)`)
        }
        prev = row.hash
        const entry = JSON.parse(row.entry) as AuditEntry
        const result = await checkEntry(p, entry)
        if (entry.proof) signed++
        if (result === 'unknown') unknown++
        else if (result !== 'ok') problems.push(`row ${row.seq}: signature: ${result}`)
      }
      return { count, signed, unknown, problems, head: prev }
    })
    for (const problem of report.problems) c.out(problem)
    c.out(
      `${report.count} decisions, ${report.signed} signed by a passkey` +
        (report.unknown ? ` (${report.unknown} by passkeys since removed: not checkable)` : '') +
        `; head ${report.head}`,
    )
    if (report.problems.length > 0) {
      c.out(`FAILED: ${report.problems.length} problem(s)`)
      return 1
    }
    c.out('OK: the chain is whole and every signature checks')
    return 0
  },
}

export const auditExport: AdminCommand = {
  name: 'audit export',
  summary: 'the approval audit log as JSON lines (one decision each, with its hashes)',
  help: 'hark admin audit export [--channel ID] [--data DIR]',
  valued: ['data', 'config', 'channel', 'database-url'],
  async run(c) {
    if (c.args.positionals.length > 0) throw new UsageError('usage: hark admin audit export')
    const channel = flagString(c.args, 'channel')
    await withRecords(c, async (p) => {
      for await (const row of rows(p)) {
        if (channel && row.channel_id !== channel) continue
        const entry = JSON.parse(row.entry) as AuditEntry
        c.out(JSON.stringify({ seq: row.seq, prev_hash: row.prev_hash, hash: row.hash, entry }))
      }
    })
    return 0
  },
}
