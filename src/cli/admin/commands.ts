import { FatalError, UsageError } from '../../core/errors.ts'
import { terminalQr, wantsQr } from '../../core/terminal-qr.ts'
import { connectPostgres } from '../../db/pg/connect.ts'
import { pgSchemaVersion } from '../../db/pg/migrate.ts'
import { parsePostgresUrl } from '../../db/pg/url.ts'
import { issueSignInLink } from '../../people/enrol/sign-in-links.ts'
import {
  addChannel,
  addPersonToken,
  addUser,
  type Provisioning,
  userByEmail,
} from '../../people/service.ts'
import type { UserRow } from '../../people/store.ts'
import { pgPushStore } from '../../push/pg-store.ts'
import { rotateVapid, rotateVapidIn, VAPID_REFRESH_MS } from '../../push/vapid.ts'
import { flagString } from '../args.ts'
import { baseUrlFrom, databaseUrlFrom, s3UrlFrom } from '../settings.ts'
import { BackupError, backup, restore } from './backup.ts'
import { keepCount, pruneBackups, scheduledName } from './backup-schedule.ts'
import { type AdminCommand, type AdminContext, withRecords } from './command.ts'

/**
 * The operator's commands. Those that change records all take the same flags, as they always
 * have (a flag one of them does not use is ignored); backup and restore take only --data and
 * --config.
 */
const RECORD_VALUED = ['data', 'name', 'user', 'label', 'config', 'database-url'] as const
const RECORD_BOOLEANS = ['owner'] as const
const ARCHIVE_VALUED = ['data', 'config', 's3-url', 'database-url'] as const

/**
 * A backup holds the data directory's files; with `HARK_S3_URL` they are in the bucket, and an
 * archive without them (or a restore that put them on disk) would look whole and not be.
 */
function refuseS3(c: AdminContext, command: string): void {
  if (databaseUrlFrom(c.args, c.env) !== undefined) {
    throw new BackupError(
      `the records are in Postgres (HARK_DATABASE_URL is set), so hark admin ${command} cannot ${command} them; ` +
        'use pg_dump and the bucket as docs/scaling.md ("Backups") describes',
    )
  }
  if (s3UrlFrom(c.args, c.env) === undefined) return
  throw new BackupError(
    `files are kept in S3 (HARK_S3_URL is set), so hark admin ${command} cannot ${command} them; ` +
      'back up the bucket and the database as docs/scaling.md ("Files on S3") describes',
  )
}

function needUser(c: AdminContext, command: string): string {
  const user = flagString(c.args, 'user')
  if (!user) throw new UsageError(`hark admin ${command} needs --user EMAIL`)
  return user
}

const LINKED = [...RECORD_VALUED, 'base-url', 'port'] as const
const LINKED_BOOLEANS = ['qr', 'no-qr'] as const

/**
 * Prints a person's new sign-in link, alone on the last line: without it a person made here, on
 * a server without email, could not get in at all.
 */
async function printSignInLink(c: AdminContext, p: Provisioning, user: UserRow): Promise<void> {
  const base = baseUrlFrom(c.args, c.env)
  const { link } = await issueSignInLink(p, user, base.value)
  // Only a URL nobody set is a guess; one given (even a localhost one) is the operator's word.
  if (!base.named) {
    c.out(`Note: the link uses ${base.value}; set HARK_BASE_URL (or --base-url) to the public URL.`)
  }
  // Scanned, the link enrols the passkey on the phone itself; the link stays the last line.
  if (wantsQr(c.args.flags, process.stdout, link)) c.out(terminalQr(link).trimEnd())
  c.out(`Sign-in link for ${user.email} (one-time, valid 24 hours; it enrols a passkey):`)
  c.out(link)
}

export const userAdd: AdminCommand = {
  name: 'user add',
  summary: 'prints a one-time sign-in link that enrols a passkey, alone on the last line',
  help: 'hark admin user add EMAIL [--name NAME] [--owner] [--base-url URL] [--data DIR] [--qr|--no-qr]',
  valued: LINKED,
  booleans: [...RECORD_BOOLEANS, ...LINKED_BOOLEANS],
  async run(c) {
    const [email] = c.args.positionals
    if (!email || c.args.positionals.length > 1) {
      throw new UsageError('usage: hark admin user add EMAIL')
    }
    baseUrlFrom(c.args, c.env) // a bad --base-url is refused before the person is made
    await withRecords(
      c,
      async (p) => {
        const user = await addUser(p, {
          email,
          name: flagString(c.args, 'name'),
          owner: c.args.flags.has('owner'),
        })
        c.out(`Added ${user.email}${user.is_owner ? ' as the owner' : ''} (${user.id}).`)
        await printSignInLink(c, p, user)
      },
      { provisions: true },
    )
    return 0
  },
}

export const userLink: AdminCommand = {
  name: 'user link',
  summary: `a new sign-in link for the person (a lost phone, a new device); it voids their
earlier link, not their passkeys`,
  help: 'hark admin user link EMAIL [--base-url URL] [--data DIR] [--qr|--no-qr]',
  valued: LINKED,
  booleans: LINKED_BOOLEANS,
  async run(c) {
    const [email] = c.args.positionals
    if (!email || c.args.positionals.length > 1) {
      throw new UsageError('usage: hark admin user link EMAIL')
    }
    baseUrlFrom(c.args, c.env)
    await withRecords(c, async (p) => await printSignInLink(c, p, await userByEmail(p, email)))
    return 0
  },
}

/**
 * A command that makes a token for --user's person and shows it once: what was made, then the
 * token alone on the last line, where scripts take it from.
 */
function tokenCommand(definition: {
  name: string
  summary: string
  help: string
  kind: 'Agent' | 'Person'
  issue(
    p: Provisioning,
    input: { email: string; label?: string },
  ): Promise<{ made: string; token: string }>
}): AdminCommand {
  return {
    name: definition.name,
    summary: definition.summary,
    help: definition.help,
    valued: RECORD_VALUED,
    booleans: RECORD_BOOLEANS,
    async run(c) {
      const email = needUser(c, definition.name)
      const { made, token } = await withRecords(c, (p) =>
        definition.issue(p, { email, label: flagString(c.args, 'label') }),
      )
      c.out(`${made} for ${email}.`)
      c.out(`${definition.kind} token (shown once, store it now):`)
      c.out(token)
      return 0
    },
  }
}

export const channelAdd = tokenCommand({
  name: 'channel add',
  summary: 'prints the new agent token alone on the last line',
  help: 'hark admin channel add --user EMAIL [--label LABEL] [--data DIR]',
  kind: 'Agent',
  async issue(p, input) {
    const { channel, token } = await addChannel(p, input)
    return { made: `Created channel ${channel.id} "${channel.label}"`, token }
  },
})

export const tokenAdd = tokenCommand({
  name: 'token add',
  summary: 'prints a new person token alone on the last line',
  help: 'hark admin token add --user EMAIL [--label LABEL] [--data DIR]',
  kind: 'Person',
  async issue(p, input) {
    const { token, row } = await addPersonToken(p, input)
    return { made: `Created person token ${row.id}`, token }
  },
})

/** The archive's FILE, the one argument backup and restore take. */
function archivePath(c: AdminContext, name: string): string {
  const [file] = c.args.positionals
  if (!file || c.args.positionals.length > 1) {
    throw new UsageError(`usage: hark admin ${name} FILE [--data DIR]`)
  }
  return file
}

const sizeText = (n: number) =>
  n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`

export const backupCommand: AdminCommand = {
  name: 'backup',
  summary:
    'a consistent snapshot of the database and files, while the server runs; --dir names it hark-<UTC time>.tar there, --keep N then keeps the newest N',
  help: 'hark admin backup (FILE | --dir DIR [--keep N]) [--data DIR]',
  valued: [...ARCHIVE_VALUED, 'dir', 'keep'],
  async run(c) {
    const dir = flagString(c.args, 'dir')
    const keep = flagString(c.args, 'keep')
    if (dir === undefined && keep !== undefined) throw new UsageError('--keep goes with --dir')
    if (dir !== undefined && c.args.positionals.length > 0) {
      throw new UsageError('give FILE or --dir DIR, not both')
    }
    const file = dir === undefined ? archivePath(c, 'backup') : scheduledName(dir)
    refuseS3(c, 'backup')
    const m = await backup(c.dataDir, file)
    const bytes = m.files.reduce((a, f) => a + f.size, m.database.size)
    c.out(
      `Backed up ${c.dataDir} to ${file}: database (schema ${m.schema_version}, integrity ok) and ${m.files.length} files, ${sizeText(bytes)}, all checksummed.`,
    )
    if (dir !== undefined && keep !== undefined) {
      for (const old of pruneBackups(dir, keepCount(keep)))
        c.out(`Removed the older backup ${old}.`)
    }
    return 0
  },
}

export const restoreCommand: AdminCommand = {
  name: 'restore',
  summary: 'into an empty or new data directory; start the server afterwards',
  help: 'hark admin restore FILE [--data DIR]',
  valued: ARCHIVE_VALUED,
  async run(c) {
    const file = archivePath(c, 'restore')
    refuseS3(c, 'restore')
    const m = await restore(file, c.dataDir)
    c.out(
      `Restored ${file} (hark ${m.hark_version}, schema ${m.schema_version}, ${m.files.length} files) into ${c.dataDir}; integrity and checksums verified.`,
    )
    if (!m.vapid) {
      c.out('The backup holds no VAPID keys (an older hark made it): push subscriptions were')
      c.out('dropped; every device must turn notifications on again (Settings, Notifications).')
    }
    c.out('Start the server on it; a newer hark upgrades the schema at start.')
    return 0
  },
}

/** Push services bind each subscription to the key it was made with: none survives. */
function warnRotation(c: AdminContext): void {
  c.out('Warning: rotating the VAPID keys drops every push subscription; every device must')
  c.out('turn notifications on again (Settings, Notifications).')
}

/** The schema that keeps the pair in the database (`vapid_keys`). */
const VAPID_KEYS_SCHEMA = 14

/**
 * With a database URL the instances share the pair in `vapid_keys`: it is replaced there, with
 * the subscriptions, in one transaction; each instance re-reads the row within 15 s.
 */
async function rotateInDatabase(c: AdminContext, url: string): Promise<number> {
  const pg = parsePostgresUrl(url) // databaseUrlFrom has checked it
  const sql = await connectPostgres(pg, 1)
  try {
    const version = await pgSchemaVersion(sql)
    if (version < VAPID_KEYS_SCHEMA) {
      throw new FatalError(
        `${pg.masked} is at schema ${version}: the VAPID keys are kept there from schema ${VAPID_KEYS_SCHEMA} (vapid_keys); nothing rotated (HARK_DATABASE_URL / --database-url names it)`,
      )
    }
    warnRotation(c)
    const dropped = await sql.begin(async (tx) => {
      await rotateVapidIn(tx)
      return await pgPushStore(tx).removeAll()
    })
    c.out(
      `Rotated the VAPID keys in ${pg.masked} (vapid_keys); dropped ${dropped} subscriptions. Every instance signs with the new keys within ${VAPID_REFRESH_MS / 1000} seconds.`,
    )
    return 0
  } finally {
    await sql.close()
  }
}

export const vapidRotate: AdminCommand = {
  name: 'vapid rotate',
  summary: `new web push (VAPID) keys; drops every device's subscription: each must turn
notifications on again; with --database-url (HARK_DATABASE_URL), the keys every instance
shares in that database, not the data directory's vapid.json`,
  help: 'hark admin vapid rotate [--data DIR] [--database-url URL]',
  valued: [...RECORD_VALUED, 'database-url'],
  booleans: RECORD_BOOLEANS,
  async run(c) {
    const url = databaseUrlFrom(c.args, c.env)
    if (url !== undefined) return await rotateInDatabase(c, url)
    const dropped = await withRecords(c, async (p) => {
      warnRotation(c)
      rotateVapid(c.dataDir)
      return await p.writes.apply(async (tx) => await tx.store.push.removeAll())
    })
    c.out(`Rotated the VAPID keys in ${c.dataDir}; dropped ${dropped} subscriptions.`)
    return 0
  },
}
