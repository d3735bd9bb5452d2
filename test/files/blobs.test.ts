import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  BlobMismatchError,
  type BlobStore,
  BlobStoreError,
  type PutOptions,
} from '../../src/files/blobs.ts'
import { DiskBlobs } from '../../src/files/disk-blobs.ts'
import { S3Blobs } from '../../src/files/s3-blobs.ts'
import { parseS3Url } from '../../src/files/s3-url.ts'
import { tempDir } from '../harness.ts'
import { startS3, type TestS3 } from './s3-fixture.ts'

/** The same cases against both stores: what the files service relies on, whatever holds bytes. */

let s3: TestS3
const dirs: string[] = []
beforeAll(async () => {
  s3 = await startS3()
})
afterAll(async () => {
  await s3.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

let n = 0
const stores: [string, () => BlobStore][] = [
  [
    'disk',
    () => {
      const dir = tempDir('hark-blobs-')
      dirs.push(dir)
      return new DiskBlobs(join(dir, 'files'))
    },
  ],
  // A prefix of its own per case: every case starts with an empty store.
  ['s3', () => new S3Blobs(parseS3Url(s3.url(`case${++n}`)))],
]

function bytes(size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 7 + 3) % 256
  return out
}

async function* chunks(data: Uint8Array, size = 64 * 1024): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size)
}

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

class TooLarge extends Error {}
const limit = (maxBytes: number, more: Partial<PutOptions> = {}): PutOptions => ({
  maxBytes,
  tooLarge: (size) => new TooLarge(`too large at ${size}`),
  ...more,
})

async function read(store: BlobStore, key: string, range?: { start: number; end: number }) {
  const body = await store.get(key, range)
  if (body === undefined) return undefined
  return new Uint8Array(await new Response(body).arrayBuffer())
}

async function keys(store: BlobStore): Promise<string[]> {
  const out: string[] = []
  for await (const k of store.list()) out.push(k)
  return out.sort()
}

describe.each(stores)('%s blob store', (_name, make) => {
  test('put streams to the key and returns the size and SHA-256; get reads it back', async () => {
    const store = make()
    await store.check()
    const data = bytes(200_000)
    expect(await store.put('ch_a/file_1', chunks(data), limit(1e6))).toEqual({
      size: data.length,
      sha256: sha(data),
    })
    expect(await read(store, 'ch_a/file_1')).toEqual(data)
    expect(await keys(store)).toEqual(['ch_a/file_1'])
  })

  test('an empty body is an empty object', async () => {
    const store = make()
    expect(await store.put('ch_a/empty', null, limit(10))).toEqual({
      size: 0,
      sha256: sha(bytes(0)),
    })
    expect(await read(store, 'ch_a/empty')).toEqual(new Uint8Array(0))
  })

  test('get with a range gives only those bytes', async () => {
    const store = make()
    const data = bytes(10_000)
    await store.put('ch_a/file_1', chunks(data, 1000), limit(1e6))
    expect(await read(store, 'ch_a/file_1', { start: 100, end: 200 })).toEqual(data.slice(100, 200))
    expect(await read(store, 'ch_a/file_1', { start: 9_999, end: 10_000 })).toEqual(
      data.slice(9_999),
    )
  })

  test('a missing key is undefined, and deleting it is no error', async () => {
    const store = make()
    expect(await store.get('ch_a/nothing')).toBeUndefined()
    await store.delete('ch_a/nothing')
  })

  test('past the limit the write is cut with the caller’s error and nothing is left', async () => {
    const store = make()
    await expect(store.put('ch_a/big', chunks(bytes(300_000)), limit(100_000))).rejects.toThrow(
      TooLarge,
    )
    expect(await store.get('ch_a/big')).toBeUndefined()
    expect(await keys(store)).toEqual([])
  })

  test('past the limit after several S3 parts (over 5 MiB): nothing is left', async () => {
    const store = make()
    const big = bytes(7 * 1024 * 1024)
    await expect(store.put('ch_a/big', chunks(big), limit(6 * 1024 * 1024))).rejects.toThrow(
      TooLarge,
    )
    expect(await keys(store)).toEqual([])
    // And a large body within the limit is stored whole.
    expect((await store.put('ch_a/ok', chunks(big), limit(8 * 1024 * 1024))).size).toBe(big.length)
    expect(sha((await read(store, 'ch_a/ok')) as Uint8Array)).toBe(sha(big))
  })

  test('bytes that do not match the expected SHA-256 leave nothing', async () => {
    const store = make()
    const data = bytes(5000)
    await expect(
      store.put('ch_a/f', chunks(data), limit(1e6, { sha256: sha(bytes(4999)) })),
    ).rejects.toThrow(BlobMismatchError)
    expect(await keys(store)).toEqual([])
    expect(await store.put('ch_a/f', chunks(data), limit(1e6, { sha256: sha(data) }))).toEqual({
      size: 5000,
      sha256: sha(data),
    })
  })

  test('a body that fails midway leaves nothing', async () => {
    const store = make()
    async function* broken() {
      yield bytes(1000)
      throw new Error('connection cut')
    }
    await expect(store.put('ch_a/f', broken(), limit(1e6))).rejects.toThrow('connection cut')
    expect(await keys(store)).toEqual([])
  })

  test('delete removes one key; deletePrefix a channel’s, and no other', async () => {
    const store = make()
    for (const k of ['ch_a/1', 'ch_a/2', 'ch_b/1']) await store.put(k, chunks(bytes(10)), limit(99))
    await store.delete('ch_a/1')
    expect(await keys(store)).toEqual(['ch_a/2', 'ch_b/1'])
    await store.deletePrefix('ch_a/')
    expect(await keys(store)).toEqual(['ch_b/1'])
  })

  test('keys other than a channel and a file id are refused', async () => {
    const store = make()
    for (const bad of ['../x/y', 'a/b/c', 'nochannel', 'a/..']) {
      await expect(store.put(bad, null, limit(1))).rejects.toThrow('not a file key')
    }
  })
})

test('disk: a failed write leaves nothing in the temporary folder either', async () => {
  const dir = tempDir('hark-blobs-')
  dirs.push(dir)
  const store = new DiskBlobs(join(dir, 'files'))
  await expect(store.put('ch_a/big', chunks(bytes(300)), limit(100))).rejects.toThrow(TooLarge)
  expect(readdirSync(join(dir, 'files', '.tmp'))).toEqual([])
})

describe('s3 check()', () => {
  test('a bucket that does not exist is a clear error naming it', async () => {
    const store = new S3Blobs(parseS3Url(s3.url('p', 'no-such-bucket')))
    const error = await store.check().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(BlobStoreError)
    expect((error as Error).message).toContain('cannot use the S3 bucket "no-such-bucket"')
    expect((error as Error).message).toContain('NoSuchBucket')
  })

  test('an endpoint nobody answers on is a clear error', async () => {
    const store = new S3Blobs(parseS3Url('s3://k:s@127.0.0.1:1/hark-files?tls=false'))
    const error = await store.check().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(BlobStoreError)
    expect((error as Error).message).toContain('at http://127.0.0.1:1')
  })

  test('the probe object is removed again', async () => {
    const store = new S3Blobs(parseS3Url(s3.url('probe')))
    await store.check()
    expect((await s3.keys()).filter((k) => k.startsWith('probe/'))).toEqual([])
  })
})
