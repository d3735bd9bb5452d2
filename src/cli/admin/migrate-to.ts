import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { FatalError, UsageError } from '../../core/errors.ts'
import { databasePath, openDatabase } from '../../db/database.ts'
import { connectPostgres } from '../../db/pg/connect.ts'
import { migratePostgres } from '../../db/pg/migrate.ts'
import { POSTGRES_URL_FORM, type PostgresLocation, parsePostgresUrl } from '../../db/pg/url.ts'
import { copyFiles } from '../../files/copy.ts'
import { DiskBlobs } from '../../files/disk-blobs.ts'
import { S3Blobs } from '../../files/s3-blobs.ts'
import { parseS3Url } from '../../files/s3-url.ts'
import { fileStore } from '../../files/store.ts'
import { readVapid, vapidFile } from '../../push/vapid.ts'
import { databaseUrlFrom, s3UrlFrom } from '../settings.ts'
import type { AdminCommand, AdminContext } from './command.ts'
import { copyToPostgres } from './pg-copy.ts'

/** A server that does not answer in this long is reported, not waited on. */
function location(url: string | undefined): PostgresLocation {
  if (url === undefined) {
    throw new UsageError(
      `hark admin migrate-to needs --database-url (or HARK_DATABASE_URL): ${POSTGRES_URL_FORM}`,
    )
  }
  return parsePostgresUrl(url) // databaseUrlFrom has checked it
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/**
 * With `--s3-url`, the files' bytes go into the bucket, each checked against its record; run
 * inside the records' snapshot, before them. Without, they stay where they are.
 */
function filesStep(c: AdminContext, db: Database): () => Promise<void> {
  const s3 = s3UrlFrom(c.args, c.env)
  const disk = join(c.dataDir, 'files')
  if (s3 === undefined) {
    return async () =>
      c.out(
        `Files stay in ${disk}: instances on Postgres keep them in S3 (--s3-url, docs/scaling.md).`,
      )
  }
  return async () => {
    const bucket = new S3Blobs(parseS3Url(s3))
    await bucket.check()
    const copied = await copyFiles(fileStore(db).checksums(), new DiskBlobs(disk), bucket)
    c.out(
      `Copied ${copied.files} files (${mib(copied.bytes)}) into ${bucket.where}, each size and SHA-256 checked.`,
    )
  }
}

export const migrateTo: AdminCommand = {
  name: 'migrate-to',
  summary: `copies every record into an empty Postgres database (schema made there first) and
verifies the counts table by table; with --s3-url, the files' bytes into the bucket, each
hash checked; stop the server first: what it writes after the copy's snapshot stays behind`,
  help: 'hark admin migrate-to --database-url URL [--s3-url URL] [--data DIR]',
  valued: ['data', 'config', 'database-url', 's3-url'],
  async run(c) {
    if (c.args.positionals.length > 0)
      throw new UsageError('usage: hark admin migrate-to --database-url URL')
    const pg = location(databaseUrlFrom(c.args, c.env))
    const file = databasePath(c.dataDir)
    if (!existsSync(file)) throw new UsageError(`${c.dataDir} holds no Hark database (${file})`)
    // The push signing keys go with the records: every subscription copied was made with them.
    let vapid: ReturnType<typeof readVapid>
    try {
      vapid = readVapid(c.dataDir)
    } catch (error) {
      throw new FatalError(`cannot read ${vapidFile(c.dataDir)}: ${(error as Error).message}`)
    }
    const db = openDatabase(file)
    const sql = await connectPostgres(pg, 1).catch((error) => {
      db.close()
      throw error
    })
    try {
      const { to } = await migratePostgres(sql)
      c.out(`Copying ${file} into ${pg.masked} (schema ${to}):`)
      const tables = await copyToPostgres(
        db,
        sql,
        to,
        (t) => c.out(`  ${t.table}: ${t.copied}`),
        filesStep(c, db),
        vapid,
      )
      const records = tables.reduce((n, t) => n + t.copied, 0)
      c.out(
        `Copied ${records} records in ${tables.length} tables; every table's count verified in Postgres.`,
      )
      c.out(
        vapid
          ? 'Copied the web push (VAPID) keys from vapid.json into vapid_keys: devices subscribed before the move keep receiving pushes.'
          : 'No vapid.json to copy: the first instance makes the web push (VAPID) keys.',
      )
      c.out(
        `Files stay in ${c.dataDir}/files: instances on Postgres keep them in S3 (docs/scaling.md).`,
      )
      return 0
    } finally {
      await sql.close()
      db.close()
    }
  },
}
