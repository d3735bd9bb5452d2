import { describe, expect, test } from 'bun:test'
import { HarkError } from '../../src/core/errors.ts'
import { answerBatch } from '../../src/messages/asks/batch.ts'
import { answerAsk } from '../../src/messages/asks/service.ts'
import { messageOf } from '../../src/messages/records.ts'
import type { Message } from '../../src/messages/schema.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { signBatch } from '../asks/signing.ts'
import { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * Batch answers on Postgres (issue 29 item 5): one assertion over the list of claims settles
 * every item in one write unit, or none when one of them was answered meanwhile. SQLite's twin:
 * test/asks/batch.test.ts, over HTTP.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('batch answers on Postgres', () => {
  const cluster = useCluster()

  test('all settled with one assertion; an item answered meanwhile rolls every one back', async () => {
    const url = await cluster.database('batch_answers')
    const made = await provisionOwner(url)
    const ctx = await pgInstance(url)
    try {
      // The owner's passkey: a software authenticator for this instance's origin.
      const authenticator = new SoftwareAuthenticator('http://hark.test')
      await authenticator.register({
        challenge: 'x',
        rp: { id: 'hark.test', name: 'Hark' },
        user: { id: 'dXNlcg', name: 'o', displayName: 'o' },
      })
      // biome-ignore lint/complexity/useLiteralKeys: the key's COSE form is the fixture's own
      const publicKey = await authenticator['coseKey']()
      await ctx.writes.apply(
        async (tx) =>
          await tx.store.passkeys.insert({
            id: authenticator.id,
            user_id: made.user.id,
            public_key: publicKey,
            counter: 0,
            transports: null,
            device_type: 'singleDevice',
            backed_up: 0,
            name: 'Phone',
            created_at: Date.now(),
          }),
      )
      ctx.clock.now = () => Date.now()
      const ask = async (command: string) =>
        messageOf(
          await sendMessage(ctx, made.channel, 'agent', {
            body: { blocks: [{ type: 'approval', id: 'a', tool: 'Bash', input: { command } }] },
          }),
        )
      const allow = { decision: 'allow' }
      const batch = async (questions: Message[]) => {
        const { proof } = await signBatch(
          authenticator,
          questions.map((question) => ({ question, answer: allow })),
          { rpId: 'hark.test' },
        )
        return () =>
          answerBatch(
            ctx,
            made.user.id,
            questions.map((q) => ({ id: q.id, answer: allow })),
            { via: 'session', proof },
          )
      }
      const status = async (q: Message) => (await ctx.store.messages.byId(q.id))?.ask_status

      const good = [await ask('npm test'), await ask('npm run lint')]
      const answered = await (await batch(good))()
      expect(answered.map((a) => a.answer)).toEqual([allow, allow])
      expect(await Promise.all(good.map(status))).toEqual(['answered', 'answered'])
      const stored = answered[0]?.message.ask?.proof as { batch?: { items: string[] } }
      expect(stored.batch?.items).toHaveLength(2)

      // The race made exact: the last item is denied elsewhere once every item was found open,
      // as the signature's passkey is read.
      const raced = [await ask('a'), await ask('b'), await ask('c')]
      const send = await batch(raced)
      const passkeys = ctx.store.passkeys
      const byId = passkeys.byId.bind(passkeys)
      passkeys.byId = async (id: string) => {
        passkeys.byId = byId
        await answerAsk(ctx, made.channel, (raced[2] as Message).id, { decision: 'deny' })
        return await byId(id)
      }
      const error = await send().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(HarkError)
      expect([(error as HarkError).status, (error as HarkError).field]).toEqual([
        409,
        'items[2].id',
      ])
      expect(await Promise.all(raced.map(status))).toEqual(['open', 'open', 'answered'])
    } finally {
      await closeContext(ctx)
    }
  }, 60_000)
})
