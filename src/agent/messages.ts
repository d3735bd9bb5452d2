import { UsageError } from '../core/errors.ts'
import type { AckState } from '../messages/schema.ts'
import { type BodySpec, composeBody, type ProgressSpec, progressBody } from './bodies.ts'
import type { AgentClient } from './client.ts'

/**
 * What an agent does with its messages, the same from `hark send` and from the MCP tool
 * `notify`: each front end turns its own arguments into a spec and shows the answer its way.
 */
export interface Delivery {
  /** No push notification; undefined leaves it to the server (a notification). */
  silent?: boolean
}

/** Sends a message; its files are uploaded first. */
export async function sendMessage(client: AgentClient, spec: BodySpec, delivery: Delivery = {}) {
  const body = await composeBody(client, spec)
  return client.send({ body, silent: delivery.silent })
}

/** Creates or replaces the pinned message under `key`. */
export async function pinMessage(
  client: AgentClient,
  key: string,
  spec: BodySpec,
  delivery: Delivery = {},
) {
  const body = await composeBody(client, spec)
  return client.pin(key, { body, silent: delivery.silent })
}

/** Pins a progress bar under `key`, or moves it; always silent, so a moving bar never rings. */
export function showProgress(client: AgentClient, key: string, spec: ProgressSpec) {
  return client.pin(key, { body: progressBody(spec), silent: true })
}

export const ACK_STATES = ['seen', 'working', 'done'] as const satisfies readonly AckState[]

/** An acknowledgment's state from text: `hark ack ID STATE` (the MCP schema lists them). */
export function ackState(raw: string): AckState {
  if (!(ACK_STATES as readonly string[]).includes(raw)) {
    throw new UsageError(`the state must be seen, working or done (got "${raw}")`)
  }
  return raw as AckState
}
