import { expect, test } from 'bun:test'
import { pgPushStore } from '../../src/push/pg-store.ts'
import { pushStore, type SubscriptionRow } from '../../src/push/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof pushStore>>

/** Past 2^31 ms and close to 2^53: timestamps must come back as the same numbers. */
const FAR = 8_640_000_000_000_000

async function people(e: E) {
  await e.insert('users', [
    { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1, email_verified: 1 },
    { id: 'u2', email: 'u2@example.com', is_owner: 0, created_at: 1, email_verified: 0 },
  ])
  await e.insert('channels', [
    { id: 'c1', user_id: 'u1', label: 'Build bot', created_at: 1, updated_at: 1 },
    { id: 'c2', user_id: 'u2', label: 'Other', created_at: 1, updated_at: 1 },
  ])
}

const device = (
  id: string,
  more: Partial<{ user: string; endpoint: string; at: number }> = {},
) => ({
  id,
  user_id: more.user ?? 'u1',
  endpoint: more.endpoint ?? `https://push.example.com/${id}`,
  p256dh: `key-${id}`,
  auth: `auth-${id}`,
  name: `Phone ${id}`,
  user_agent: 'Firefox',
  created_at: more.at ?? 1_764_000_000_000,
})

/** Rows read directly, their int8 columns as numbers (Postgres answers them as strings). */
const numbered = (rows: Record<string, unknown>[], ...columns: string[]) =>
  rows.map(
    (r): Record<string, unknown> => ({
      ...r,
      ...Object.fromEntries(columns.map((c) => [c, Number(r[c])])),
    }),
  )

let rid = 0
const message = (
  e: E,
  id: string,
  channel: string,
  at: number,
  more: Record<string, unknown> = {},
) =>
  e.insert('messages', {
    rid: ++rid,
    id,
    channel_id: channel,
    seq: rid,
    sender: 'agent',
    body: `{"title":"${id}"}`,
    silent: 0,
    created_at: at,
    updated_at: at,
    ...more,
  })

describeStore('push store', { sqlite: pushStore, postgres: pgPushStore }, (engine) => {
  test('insert answers the row; byId, byEndpoint, byUser (creation order, ties by id in bytes)', async () => {
    const e = engine()
    await people(e)
    const made = await e.write((s) => s.insert(device('b', { at: FAR })))
    expect(made).toEqual({ ...device('b', { at: FAR }), last_success_at: null })
    await e.write(async (s) => {
      await s.insert({ ...device('a', { at: 5 }), name: null, user_agent: null })
      await s.insert(device('B', { at: 5 }))
      await s.insert(device('x', { user: 'u2' }))
    })
    expect(await e.read((s) => s.byId('b'))).toEqual(made)
    expect(await e.read((s) => s.byEndpoint('https://push.example.com/b'))).toEqual(made)
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    expect(await e.read((s) => s.byEndpoint('https://push.example.com/nope'))).toBeUndefined()
    expect((await e.read((s) => s.byUser('u1'))).map((d) => d.id)).toEqual(['B', 'a', 'b'])
    expect(await e.read((s) => s.byId('a'))).toMatchObject({ name: null, user_agent: null })
    expect(await e.read((s) => s.countByUser('u1'))).toBe(3)
    expect(await e.read((s) => s.countByUser('nobody'))).toBe(0)
    expect(await e.read((s) => s.anyByUser('u1'))).toBe(true)
    expect(await e.read((s) => s.anyByUser('u2'))).toBe(true)
    expect(await e.read((s) => s.anyByUser('nobody'))).toBe(false)
    expect(await e.read((s) => s.byUser('nobody'))).toEqual([])
  })

  test('the same endpoint again: the same device with fresh keys; another person’s is left alone', async () => {
    const e = engine()
    await people(e)
    const first = await e.write((s) => s.insert(device('d1', { endpoint: 'https://p/1' })))
    const again = await e.write((s) =>
      s.insert({
        ...device('d2', { endpoint: 'https://p/1', at: 99 }),
        name: null,
        p256dh: 'k2',
        auth: 'a2',
        user_agent: null,
      }),
    )
    // The first row, its id, name and creation kept; keys and user agent replaced.
    expect(again).toEqual({
      ...(first as SubscriptionRow),
      p256dh: 'k2',
      auth: 'a2',
      user_agent: null,
    })
    const taken = await e.write((s) =>
      s.insert({ ...device('d3', { endpoint: 'https://p/1', user: 'u2' }), p256dh: 'evil' }),
    )
    expect(taken).toBeUndefined()
    expect(await e.read((s) => s.byEndpoint('https://p/1'))).toEqual(again)
    expect(await e.rows('SELECT id FROM push_subscriptions')).toEqual([{ id: 'd1' }])
  })

  test('remove, removeByUser and removeAll take the devices and their queued pushes', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      for (const id of ['a', 'b']) await s.insert(device(id))
      await s.insert(device('c', { user: 'u2' }))
      await s.enqueueForUser('u1', null, '{}', 10)
    })
    await e.write((s) => s.remove('a'))
    await e.write((s) => s.remove('nope'))
    expect(await e.read((s) => s.queued())).toBe(1)
    await e.write((s) => s.succeeded('b', FAR))
    expect((await e.read((s) => s.byId('b')))?.last_success_at).toBe(FAR)
    expect(await e.write((s) => s.removeByUser('u1'))).toBe(1)
    expect(await e.write((s) => s.removeByUser('u1'))).toBe(0)
    expect(await e.read((s) => s.queued())).toBe(0)
    expect(await e.write((s) => s.removeAll())).toBe(1)
    expect(await e.write((s) => s.removeAll())).toBe(0)
  })

  test('enqueue: one push per device of the person, or one to a device; nextDue and queued', async () => {
    const e = engine()
    await people(e)
    expect(await e.read((s) => s.nextDue())).toBeNull()
    expect(await e.read((s) => s.queued())).toBe(0)
    await e.write(async (s) => {
      for (const id of ['a', 'b']) await s.insert(device(id))
    })
    await message(e, 'm1', 'c1', 1)
    expect(await e.write((s) => s.enqueueForUser('u1', 'm1', '{"t":1}', FAR))).toBe(2)
    expect(await e.write((s) => s.enqueueForUser('u2', 'm1', '{"t":1}', 5))).toBe(0)
    await e.write((s) => s.enqueueOne('b', null, '{"test":true}', 1_000))
    expect(await e.read((s) => s.queued())).toBe(3)
    expect(await e.read((s) => s.nextDue())).toBe(1_000)
    const rows = await e.rows(
      'SELECT subscription_id, message_id, payload, attempts, due_at, leased, created_at FROM push_queue ORDER BY id',
    )
    expect(numbered(rows, 'due_at', 'created_at')).toEqual([
      {
        subscription_id: 'a',
        message_id: 'm1',
        payload: '{"t":1}',
        attempts: 0,
        due_at: FAR,
        leased: 0,
        created_at: FAR,
      },
      {
        subscription_id: 'b',
        message_id: 'm1',
        payload: '{"t":1}',
        attempts: 0,
        due_at: FAR,
        leased: 0,
        created_at: FAR,
      },
      {
        subscription_id: 'b',
        message_id: null,
        payload: '{"test":true}',
        attempts: 0,
        due_at: 1_000,
        leased: 0,
        created_at: 1_000,
      },
    ])
  })

  test('claim: the due pushes oldest first as queued, each leased until its lease ends', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(device('a'))
      await s.insert(device('b'))
      await s.enqueueOne('b', null, 'late', 300)
      await s.enqueueOne('a', null, 'early', 100)
      await s.enqueueOne('a', null, 'boundary', 200)
      await s.enqueueOne('b', null, 'tie', 100)
    })
    expect(await e.write((s) => s.claim(99, 10, 10_000))).toEqual([])
    const claimed = await e.write((s) => s.claim(200, 2, 10_000))
    expect(claimed.map((r) => r.payload)).toEqual(['early', 'tie'])
    expect(claimed[0]).toEqual({
      id: claimed[0]?.id as number,
      subscription_id: 'a',
      message_id: null,
      payload: 'early',
      attempts: 0,
      due_at: 100,
      endpoint: 'https://push.example.com/a',
      p256dh: 'key-a',
      auth: 'auth-a',
    })
    expect(typeof claimed[0]?.id).toBe('number')
    // The rest that is due (due_at = now counts); the leased ones are not due again yet.
    expect((await e.write((s) => s.claim(200, 10, 10_000))).map((r) => r.payload)).toEqual([
      'boundary',
    ])
    expect(await e.read((s) => s.nextDue())).toBe(300)
    expect((await e.write((s) => s.claim(9_999, 10, 20_000))).map((r) => r.payload)).toEqual([
      'late',
    ])
    expect(await e.rows('SELECT leased FROM push_queue WHERE leased = 1')).toHaveLength(4)
    // A lease that runs out (a send that never ended) is due again, as queued at its lease's end.
    const again = await e.write((s) => s.claim(10_000, 10, FAR))
    expect(again.map((r) => [r.payload, r.due_at])).toEqual([
      ['early', 10_000], // due at one time: in the order they were queued
      ['boundary', 10_000],
      ['tie', 10_000],
    ])
  })

  test('retry puts a push back with its attempts; done forgets it; releaseLeases frees every lease', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(device('a'))
      for (const p of ['one', 'two', 'three']) await s.enqueueOne('a', null, p, 100)
    })
    const [one, two] = await e.write((s) => s.claim(100, 2, 5_000))
    await e.write((s) => s.retry(one?.id as number, 3, FAR))
    await e.write((s) => s.done(two?.id as number))
    await e.write((s) => s.done(123_456)) // gone already: no error
    expect(await e.read((s) => s.queued())).toBe(2)
    const rows = await e.rows(
      'SELECT payload, attempts, due_at, leased FROM push_queue ORDER BY id',
    )
    expect(numbered(rows, 'due_at')).toEqual([
      { payload: 'one', attempts: 3, due_at: FAR, leased: 0 },
      { payload: 'three', attempts: 0, due_at: 100, leased: 0 },
    ])
    await e.write((s) => s.claim(100, 10, 5_000))
    await e.write((s) => s.releaseLeases(150))
    const released = await e.rows('SELECT payload, due_at, leased FROM push_queue ORDER BY id')
    expect(numbered(released, 'due_at')).toEqual([
      { payload: 'one', due_at: FAR, leased: 0 },
      { payload: 'three', due_at: 150, leased: 0 },
    ])
  })

  test('two claimers at once together take every due push exactly once', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(device('a'))
      for (let i = 0; i < 10; i++) await s.enqueueOne('a', null, `p${i}`, 100 + i)
    })
    let firstClaimed = () => {}
    const claimedByFirst = new Promise<void>((resolve) => {
      firstClaimed = resolve
    })
    let secondDone = false
    const first = e.write(async (s) => {
      const rows = await s.claim(1_000, 6, 50_000)
      firstClaimed()
      // Hold the claim open while the second claims (at most half a second: on SQLite the
      // second cannot start before this commits).
      for (let i = 0; i < 50 && !secondDone; i++) await Bun.sleep(10)
      return { rows, secondDoneMeanwhile: secondDone }
    })
    await claimedByFirst
    const second = e
      .write((s) => s.claim(1_000, 6, 50_000))
      .finally(() => {
        secondDone = true
      })
    const held = await first
    const payloads = [...held.rows, ...(await second)].map((r) => r.payload)
    expect(payloads.toSorted()).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`))
    // On Postgres the second skips the rows the first holds instead of waiting for its commit
    // (plain FOR UPDATE would also give each row once, one claimer at a time).
    if (e.name === 'postgres') expect(held.secondDoneMeanwhile).toBe(true)
  })

  test("anyByUser (a send's question) does not wait for a subscribe counting the person's devices", async () => {
    const e = engine()
    await people(e)
    await e.write((s) => s.insert(device('a')))
    let counted = () => {}
    const counting = new Promise<void>((resolve) => {
      counted = resolve
    })
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    // A subscribe that has counted (on Postgres under the person's devices lock, held to its
    // commit) and has not inserted yet.
    const subscribe = e.write(async (s) => {
      const n = await s.countByUser('u1')
      counted()
      await released
      return n
    })
    await counting
    // On SQLite the one writer's transaction is open; reads go on beside it either way.
    const any = await e.read((s) => s.anyByUser('u1'))
    const inSend = e.name === 'postgres' ? await e.write((s) => s.anyByUser('u1')) : any
    release()
    expect(await subscribe).toBe(1)
    expect([any, inSend]).toEqual([true, true])
  })

  test('subscribes racing for the last place: exactly one takes it', async () => {
    const e = engine()
    await people(e)
    const max = 1
    const subscribe = (id: string) =>
      e.write(async (s) => {
        if ((await s.countByUser('u1')) >= max) return false
        await Bun.sleep(50) // on Postgres both would have counted before either inserts
        return (await s.insert(device(id))) !== undefined
      })
    const made = await Promise.all(['a', 'b', 'c'].map(subscribe))
    expect(made.filter(Boolean)).toHaveLength(1)
    expect(await e.read((s) => s.countByUser('u1'))).toBe(1)
  })
})
