import { expect, test } from 'bun:test'
import { pgFileStore } from '../../src/files/pg-store.ts'
import { type FileRow, fileStore } from '../../src/files/store.ts'
import { channel, describeStore, people, T, within } from './engines.ts'

const GB5 = 5 * 1024 ** 3 // above 2^32: sizes are int8

const file = (id: string, channelId: string, size: number, extra: Partial<FileRow> = {}) => ({
  id,
  channel_id: channelId,
  name: `${id}.txt`,
  mime: 'text/plain',
  size,
  sha256: id.padEnd(64, '0').slice(0, 64),
  created_at: T,
  ...extra,
})

describeStore('files store', { sqlite: fileStore, postgres: pgFileStore }, (engine) => {
  test('insert returns the row as stored; inChannel finds it only in its channel', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    await channel(e, 'd', 'ann')
    const f = file('f1', 'c', GB5, { name: 'Résumé — 報告 🚀.pdf', mime: 'application/pdf' })
    expect(await e.write((s) => s.insert(f))).toEqual(f)
    expect(await e.read((s) => s.inChannel('f1', 'c'))).toEqual(f)
    expect(await e.read((s) => s.inChannel('f1', 'd'))).toBeUndefined()
    expect(await e.read((s) => s.inChannel('nope', 'c'))).toBeUndefined()
    const empty = file('f0', 'c', 0)
    expect(await e.write((s) => s.insert(empty))).toEqual(empty)
  })

  test('an id is taken once, and a file needs its channel', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    await e.write((s) => s.insert(file('f', 'c', 1)))
    await expect(e.write((s) => s.insert(file('f', 'c', 2)))).rejects.toThrow()
    await expect(e.write((s) => s.insert(file('g', 'no-such-channel', 2)))).rejects.toThrow()
    expect(await e.read((s) => s.allIds())).toEqual([{ id: 'f', channel_id: 'c' }])
  })

  test('allIds and checksums: every file, checksums ordered by channel then id (by bytes)', async () => {
    const e = engine()
    expect(await e.read((s) => s.allIds())).toEqual([])
    expect(await e.read((s) => s.checksums())).toEqual([])
    await people(e, 'ann', 'bob')
    await channel(e, 'ch_b', 'ann')
    await channel(e, 'ch_A', 'bob')
    await e.write(async (s) => {
      await s.insert(file('file_b', 'ch_b', 10))
      await s.insert(file('file_B', 'ch_b', GB5))
      await s.insert(file('file_a', 'ch_A', 30))
    })
    const all = await e.read((s) => s.allIds())
    expect([...all].sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: 'file_a', channel_id: 'ch_A' },
      { id: 'file_b', channel_id: 'ch_b' },
      { id: 'file_B', channel_id: 'ch_b' },
    ])
    expect(await e.read((s) => s.checksums())).toEqual([
      { id: 'file_a', channel_id: 'ch_A', size: 30, sha256: file('file_a', '', 0).sha256 },
      { id: 'file_B', channel_id: 'ch_b', size: GB5, sha256: file('file_B', '', 0).sha256 },
      { id: 'file_b', channel_id: 'ch_b', size: 10, sha256: file('file_b', '', 0).sha256 },
    ])
  })

  test("usage and personBytes: a channel's files and bytes, a person's bytes everywhere", async () => {
    const e = engine()
    await people(e, 'ann', 'bob')
    await channel(e, 'a1', 'ann')
    await channel(e, 'a2', 'ann')
    await channel(e, 'b', 'bob')
    expect(await e.read((s) => s.usage('a1'))).toEqual({ files: 0, bytes: 0 })
    expect(await e.read((s) => s.usage('no-such-channel'))).toEqual({ files: 0, bytes: 0 })
    expect(await e.read((s) => s.personBytes('ann'))).toBe(0)
    await e.write(async (s) => {
      await s.insert(file('x', 'a1', GB5))
      await s.insert(file('y', 'a1', 7))
      await s.insert(file('z', 'a2', 0))
      await s.insert(file('w', 'b', 100))
    })
    expect(await e.read((s) => s.usage('a1'))).toEqual({ files: 2, bytes: GB5 + 7 })
    expect(await e.read((s) => s.usage('a2'))).toEqual({ files: 1, bytes: 0 })
    expect(await e.read((s) => s.personBytes('ann'))).toBe(GB5 + 7)
    expect(await e.read((s) => s.personBytes('bob'))).toBe(100)
    expect(await e.read((s) => s.personBytes('nobody'))).toBe(0)
    // A deleted channel takes its files with it.
    await e.rows("DELETE FROM channels WHERE id = 'a1'")
    expect(await e.read((s) => s.usage('a1'))).toEqual({ files: 0, bytes: 0 })
    expect(await e.read((s) => s.personBytes('ann'))).toBe(0)
    expect(await e.read((s) => s.inChannel('x', 'a1'))).toBeUndefined()
  })

  test('uploads recorded at once cannot overshoot a quota together', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'a1', 'ann')
    await channel(e, 'a2', 'ann')
    const quota = 100
    // What the upload service does when it records a file: count, check, insert, in one
    // transaction. The pause widens the window another instance would slip through.
    const record = (id: string, channelId: string) =>
      e.write(async (s) => {
        const usage = await s.usage(channelId)
        const used = await s.personBytes('ann')
        await Bun.sleep(30)
        if (usage.files >= 5 || used + 60 > quota) return undefined
        return await s.insert(file(id, channelId, 60))
      })
    const results = await Promise.all([
      record('f1', 'a1'),
      record('f2', 'a2'),
      record('f3', 'a1'),
      record('f4', 'a2'),
    ])
    expect(results.filter((r) => r !== undefined)).toHaveLength(1)
    expect(await e.read((s) => s.personBytes('ann'))).toBe(60)
  })

  test('a read outside a transaction does not hold the person (the lock ends with it)', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    expect(await e.read((s) => s.usage('c'))).toEqual({ files: 0, bytes: 0 })
    const recorded = e.write(async (s) => {
      await s.usage('c')
      return await s.insert(file('f', 'c', 1))
    })
    expect(await within(recorded, 5000)).toMatchObject({ id: 'f' })
  })
})
