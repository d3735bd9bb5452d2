import { Type as t } from '@sinclair/typebox'
import { listResponse, wrappedResponse } from '../core/docs.ts'
import { LIMITS } from './limits.ts'
import type { MessageBody as Body, Message as MessageRecord } from './schema.ts'
import { Message, MessageBody } from './schema.ts'

export const PinKeyParams = t.Object({
  key: t.String({ description: `1 to ${LIMITS.pinKeyChars} characters: letters, digits, . _ - :` }),
})

export const PutPinRequest = t.Object(
  { body: MessageBody, silent: t.Optional(t.Boolean()) },
  { $id: 'PutPinRequest' },
)
export type PutPinRequest = { body: Body; silent?: boolean }

export const Pin = t.Object({ key: t.String(), message: Message }, { $id: 'Pin' })
export type Pin = { key: string; message: MessageRecord }

export const PinResponse = wrappedResponse('PinResponse', 'pin', Pin)
export const PinsResponse = listResponse('PinsResponse', 'pins', Pin)
