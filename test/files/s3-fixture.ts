// test-needs: s3
// (an S3 server (s3rver, a devDependency, in process): the S3 part of test:e2e. See scripts/test-parts.ts.)
import { rmSync, statSync } from 'node:fs'
import { S3Client } from 'bun'
import S3rver from 's3rver'
import { tempDir } from '../harness.ts'

/** s3rver's fixed credentials (it checks signatures against them). */
export const S3_KEY = 'S3RVER'
export const S3_SECRET = 'S3RVER'
export const BUCKET = 'hark-files'

export interface TestS3 {
  port: number
  /** `HARK_S3_URL` for the bucket, under `prefix`. */
  url(prefix?: string, bucket?: string): string
  /** A client on the bucket, to look at what Hark stored (keys include the prefix). */
  client: S3Client
  /** Every key in the bucket. */
  keys(): Promise<string[]>
  close(): Promise<void>
}

/** An S3 server in this process, on a free loopback port, storing into a temporary folder. */
export async function startS3(): Promise<TestS3> {
  const dir = tempDir('hark-s3-')
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET }],
  })
  readAfterWrite(server)
  const { port } = await server.run()
  const client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    bucket: BUCKET,
    accessKeyId: S3_KEY,
    secretAccessKey: S3_SECRET,
    region: 'us-east-1',
  })
  return {
    port,
    client,
    url: (prefix = 'hark', bucket = BUCKET) =>
      `s3://${S3_KEY}:${S3_SECRET}@127.0.0.1:${port}/${bucket}/${prefix}?tls=false`,
    keys: async () => ((await client.list()).contents ?? []).map((o) => o.key).sort(),
    close: async () => {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

interface S3rverStore {
  putObject(object: { bucket: string; key: string }): Promise<{ size: number }>
  getResourcePath(bucket: string, key: string, resource: string): string
}

/**
 * s3rver answers the PUT of a body it was handed whole before that body is in its file (it ends
 * the write stream without waiting for it), so a read right after can find the object empty:
 * once in a CI run, `hark serve`'s start-up probe read back "" and refused the bucket. S3 reads
 * back what it acknowledged; here each write waits until its file holds all its bytes.
 */
function readAfterWrite(server: S3rver): void {
  const store = (server as unknown as { store: S3rverStore }).store
  const put = store.putObject.bind(store)
  store.putObject = async (object) => {
    const done = await put(object)
    const file = store.getResourcePath(object.bucket, object.key, 'object')
    for (let i = 0; i < 500; i++) {
      try {
        if (statSync(file).size >= done.size) break
      } catch {
        // Not created yet.
      }
      await Bun.sleep(2)
    }
    return done
  }
}
