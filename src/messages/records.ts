import type { AskInfo, DeletedMessage, Message, MessageBody } from './schema.ts'
import type { MessageRow } from './store.ts'

/**
 * A stored message as the API shows it: the record (`toRecord`), and the same record as JSON
 * text built straight from the stored text (`recordJson`, `feedJson`), which the feeds send.
 * test/messages/records.test.ts holds the two to the same bytes.
 */

/** A message that exists (not deleted), as its API record. */
export const messageOf = (row: MessageRow) => toRecord(row) as Message

/** The API record of a row: a message, or a tombstone once deleted. */
export function toRecord(row: MessageRow): Message | DeletedMessage {
  if (row.deleted_at !== null || row.body === null) return { id: row.id, deleted: true }
  const message: Message = {
    id: row.id,
    channel_id: row.channel_id,
    sender: row.sender,
    created_at: row.created_at,
    updated_at: row.updated_at,
    body: JSON.parse(row.body) as MessageBody,
  }
  if (row.silent) message.silent = true
  if (row.sender === 'human') message.state = row.state
  if (row.pin_key !== null) message.pin = row.pin_key
  if (row.ask_status !== null) {
    const ask: AskInfo = { status: row.ask_status }
    if (row.ask_expires_at !== null) ask.expires_at = row.ask_expires_at
    if (row.ask_answered_at !== null) ask.answered_at = row.ask_answered_at
    if (row.answer !== null) ask.answer = JSON.parse(row.answer)
    if (row.ask_request_hash !== null) ask.request_hash = row.ask_request_hash
    if (row.ask_reason !== null) ask.reason = row.ask_reason
    if (row.ask_proof !== null) ask.proof = JSON.parse(row.ask_proof)
    message.ask = ask
  }
  return message
}

const str = JSON.stringify

/**
 * The JSON text of `toRecord(row)`, byte for byte, without parsing the stored body and answer:
 * both are stored as `JSON.stringify` output, which parsing and serialising again reproduces
 * exactly, so they are copied in as they are. A full feed page is 200 of these.
 */
export function recordJson(row: MessageRow): string {
  if (row.deleted_at !== null || row.body === null) return `{"id":${str(row.id)},"deleted":true}`
  let json = `{"id":${str(row.id)},"channel_id":${str(row.channel_id)},"sender":${str(row.sender)},"created_at":${str(row.created_at)},"updated_at":${str(row.updated_at)},"body":${row.body}`
  if (row.silent) json += ',"silent":true'
  if (row.sender === 'human') json += `,"state":${str(row.state)}`
  if (row.pin_key !== null) json += `,"pin":${str(row.pin_key)}`
  if (row.ask_status !== null) {
    json += `,"ask":{"status":${str(row.ask_status)}`
    if (row.ask_expires_at !== null) json += `,"expires_at":${str(row.ask_expires_at)}`
    if (row.ask_answered_at !== null) json += `,"answered_at":${str(row.ask_answered_at)}`
    if (row.answer !== null) json += `,"answer":${row.answer}`
    if (row.ask_request_hash !== null) json += `,"request_hash":${str(row.ask_request_hash)}`
    if (row.ask_reason !== null) json += `,"reason":${str(row.ask_reason)}`
    if (row.ask_proof !== null) json += `,"proof":${row.ask_proof}`
    json += '}'
  }
  return `${json}}`
}

/** The JSON text of a `FeedResponse` of these rows. */
export function feedJson(rows: readonly MessageRow[], cursor: number, hasMore: boolean): string {
  return `{"messages":[${rows.map(recordJson).join(',')}],"cursor":${cursor},"has_more":${hasMore}}`
}
