import { createHash } from 'node:crypto'
import { approvalRequest, questionRequest } from '../../shared/canonical.ts'
import { inputBlocks } from '../blocks.ts'
import type { Block, MessageBody } from '../schema.ts'

/** The approval block of a body, if it has one (it is then the body's only input). */
export const approvalOf = (body: MessageBody): Block | undefined =>
  body.blocks?.find((b) => b.type === 'approval')

/**
 * `ask.request_hash` of an approval question (or of another question asked with `proof: true`): SHA-256 (hex) of the canonical JSON of
 * `{ tool, input }`, so an answer can be bound to the exact action it allowed. Null for a body
 * that holds no approval.
 */
export function requestHashOf(body: MessageBody, proof = false): string | null {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
  const approval = approvalOf(body)
  if (approval) return sha256(approvalRequest(approval.tool as string, approval.input))
  // Another question the agent will check a signature on: the hash of its inputs as sent.
  return proof ? sha256(questionRequest(inputBlocks(body))) : null
}
