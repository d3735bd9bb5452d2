import { type Static, Type as t } from '@sinclair/typebox'
import { LIMITS } from '../messages/limits.ts'
import { Message, MessageBody } from '../messages/schema.ts'

export const PinKeyParams = t.Object({
  key: t.String({ description: `1 to ${LIMITS.pinKeyChars} characters: letters, digits, . _ - :` }),
})

export const PutPinRequest = t.Object({ body: MessageBody, silent: t.Optional(t.Boolean()) })
export type PutPinRequest = Static<typeof PutPinRequest>

export const Pin = t.Object({ key: t.String(), message: Message })
export type Pin = Static<typeof Pin>

export const PinResponse = t.Object({ pin: Pin })
export const PinsResponse = t.Object({ pins: t.Array(Pin) })
