import { createHash } from 'node:crypto'
import type { Block, MessageBody } from '../messages/schema.ts'
import { approvalRequest } from '../shared/canonical.ts'

/** The approval block of a body, if it has one (it is then the body's only input). */
export const approvalOf = (body: MessageBody): Block | undefined =>
  body.blocks?.find((b) => b.type === 'approval')

/**
 * `ask.request_hash` of an approval question: SHA-256 (hex) of the canonical JSON of
 * `{ tool, input }`, so an answer can be bound to the exact action it allowed. Null for a body
 * that holds no approval.
 */
export function requestHashOf(body: MessageBody): string | null {
  const approval = approvalOf(body)
  if (!approval) return null
  return createHash('sha256')
    .update(approvalRequest(approval.tool as string, approval.input))
    .digest('hex')
}
