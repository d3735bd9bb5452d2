import type { Ctx, HarkEvent, Tx } from '../core/context.ts'
import { typed } from '../core/events.ts'
import { auditDeleted, auditSettled } from '../messages/asks/audit/service.ts'
import { pushCreated } from '../push/service.ts'

/**
 * Who reacts to which event a unit emits (core/events.ts), registered on the context's write
 * path before anything is written. Each reaction runs inside the emitting unit, in its
 * transaction: the push queued and the audit line appended are durable with the message or the
 * decision, and gone with them when the unit fails. The domains that emit know none of these.
 */
export function react(ctx: Ctx): void {
  typed<HarkEvent, Tx>(ctx.writes.reactions)
    .on('message.created', (tx, event) => pushCreated(ctx, tx, event))
    .on('message.deleted', auditDeleted)
    .on('ask.settled', auditSettled)
}
