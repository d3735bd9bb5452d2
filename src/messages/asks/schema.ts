import { type Static, Type as t } from '@sinclair/typebox'
import { listResponse } from '../../core/docs.ts'
import { BATCH_MAX } from '../../shared/batch.ts'
import { AnswerProof, Message } from '../schema.ts'

export const AskResponse = t.Object(
  {
    message: Message,
    answer: t.Unknown({ description: 'null until answered; the defaults once expired' }),
  },
  { $id: 'AskResponse' },
)

export const AsksResponse = listResponse('AsksResponse', 'asks', Message)

export const AskQuery = t.Object({
  wait: t.Optional(t.String({ description: 'seconds to hold the request, at most 55' })),
})
export type AskQuery = Static<typeof AskQuery>

export const AnswerRequest = t.Object(
  {
    answer: t.Unknown({
      description: 'one input: its value; several: an object keyed by block id',
    }),
    proof: t.Optional(AnswerProof),
  },
  { $id: 'AnswerRequest' },
)

export const BatchAnswerRequest = t.Object(
  {
    items: t.Array(
      t.Object(
        {
          id: t.String({ minLength: 1, maxLength: 100, description: "the question's message id" }),
          answer: t.Unknown({ description: 'as for one question' }),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 2,
        maxItems: BATCH_MAX,
        description: 'the questions, in the order their claims were signed',
      },
    ),
    proof: AnswerProof,
  },
  { $id: 'BatchAnswerRequest', additionalProperties: false },
)
export type BatchAnswerRequest = Static<typeof BatchAnswerRequest>

export const BatchAnswerResponse = listResponse('BatchAnswerResponse', 'answers', AskResponse)

export const CancelRequest = t.Object(
  {
    reason: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 200,
        description: 'why it is withdrawn, shown to the person (e.g. "answered in the terminal")',
      }),
    ),
  },
  { $id: 'CancelRequest', additionalProperties: false },
)

export const PersonAsksQuery = t.Object({
  type: t.Optional(t.Literal('approval', { description: '`approval`: only approvals' })),
})

export const HistoryQuery = t.Object({
  before: t.Optional(t.String({ description: 'seq of the oldest decision already shown' })),
  limit: t.Optional(t.String({ description: 'page size, at most 100' })),
})
