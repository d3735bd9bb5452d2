import { describe, expect, test } from 'bun:test'
import { authenticateAgent, issueToken } from '../../src/access/tokens/service.ts'
import { hashToken } from '../../src/core/ids.ts'
import { closeContext } from '../../src/server/context.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * An agent's bearer token on Postgres, checked with its channel in one read (issue 32 item 6:
 * `tokens.withOwner`: the token, its person and its channel). Nothing of it is remembered between requests on Postgres, where other
 * instances write too: a token revoked through one instance is refused by the next request to
 * any other, with no wake-up or cache in between to wait for.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('agent tokens on Postgres', () => {
  const cluster = useCluster()

  test('a token revoked on instance A is refused at once on instance B; a person token is not an agent one', async () => {
    const url = await cluster.database('agent_token')
    const made = await provisionOwner(url)
    const a = await pgInstance(url)
    const b = await pgInstance(url)
    try {
      const bearer = `Bearer ${made.token}`
      const found = await authenticateAgent(b, bearer)
      expect(found.channel).toEqual(made.channel)
      expect(found.token.channel_id).toBe(made.channel.id)
      // Checked again on B (as the next send would be), then revoked through A.
      expect((await authenticateAgent(b, bearer)).channel.id).toBe(made.channel.id)
      const row = (await a.store.tokens.withOwner(hashToken(made.token)))?.token
      await a.writes.apply(async (tx) => await tx.store.tokens.revoke(row?.id as string, 1))
      await expect(authenticateAgent(b, bearer)).rejects.toMatchObject({ status: 401 })
      await expect(authenticateAgent(a, bearer)).rejects.toMatchObject({ status: 401 })
      const person = await a.writes.apply(
        async () => await issueToken(a, 'person', made.user, null, 'script'),
      )
      await expect(authenticateAgent(b, `Bearer ${person.token}`)).rejects.toMatchObject({
        status: 403,
      })
      await expect(authenticateAgent(b, 'Bearer hark_a_unknown')).rejects.toMatchObject({
        status: 401,
      })
    } finally {
      await closeContext(a)
      await closeContext(b)
    }
  })
})
