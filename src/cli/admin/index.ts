import { statSync } from 'node:fs'
import { systemClock } from '../../core/clock.ts'
import { addChannel, addPersonToken, addUser } from '../../people/service.ts'
import { rotateVapid } from '../../push/vapid.ts'
import { databasePath, openStores, prepareDataDir } from '../../server/context.ts'
import { openDatabase } from '../../server/db/database.ts'
import { flagString, parseArgs, UsageError } from '../args.ts'
import { dataDirFrom } from '../settings.ts'
import { backup, restore } from './backup.ts'

export const ADMIN_HELP = `Operator commands; they work on the data directory directly and are safe while
the server runs.

  hark admin user add EMAIL [--name NAME] [--owner] [--data DIR]
  hark admin channel add --user EMAIL [--label LABEL] [--data DIR]
      prints the new agent token alone on the last line
  hark admin token add --user EMAIL [--label LABEL] [--data DIR]
      prints a new person token alone on the last line
  hark admin backup FILE [--data DIR]
      a consistent snapshot of the database and files, while the server runs
  hark admin restore FILE [--data DIR]
      into an empty or new data directory; start the server afterwards
  hark admin vapid rotate [--data DIR]
      new web push (VAPID) keys; drops every device's subscription: each must turn
      notifications on again

--data defaults to $HARK_DATA, else HARK_DATA in the config file (--config FILE, $HARK_CONFIG,
else /etc/hark/hark.env if it exists), else ./data. On an installed server run these as the
service's user: sudo -u hark hark admin ...`

type Out = (line: string) => void

/**
 * Run as root on a data directory someone else owns (the `hark` service user), an admin command
 * would leave root-owned files the server cannot open. Refuse, saying how to run it instead.
 */
function refuseForeignRoot(dataDir: string): void {
  if (process.getuid?.() !== 0) return
  let owner: number
  try {
    owner = statSync(dataDir).uid
  } catch {
    return
  }
  if (owner !== 0) {
    throw new UsageError(
      `${dataDir} belongs to uid ${owner}, not root: run this as that user (sudo -u hark hark admin ...)`,
    )
  }
}

const sizeText = (n: number) =>
  n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`

/** Runs `hark admin ...`; returns the exit code. */
export async function admin(
  argv: string[],
  env: Record<string, string | undefined>,
  out: Out,
): Promise<number> {
  const [noun, ...afterNoun] = argv
  if (noun === 'backup' || noun === 'restore') {
    const args = parseArgs(afterNoun, ['data', 'config'])
    const [file] = args.positionals
    if (!file || args.positionals.length > 1) {
      throw new UsageError(`usage: hark admin ${noun} FILE [--data DIR]`)
    }
    const dataDir = dataDirFrom(args, env)
    refuseForeignRoot(dataDir)
    if (noun === 'backup') {
      const m = await backup(dataDir, file)
      const bytes = m.files.reduce((a, f) => a + f.size, m.database.size)
      out(
        `Backed up ${dataDir} to ${file}: database (schema ${m.schema_version}, integrity ok) and ${m.files.length} files, ${sizeText(bytes)}, all checksummed.`,
      )
    } else {
      const m = await restore(file, dataDir)
      out(
        `Restored ${file} (hark ${m.hark_version}, schema ${m.schema_version}, ${m.files.length} files) into ${dataDir}; integrity and checksums verified.`,
      )
      if (!m.vapid) {
        out('The backup holds no VAPID keys (an older hark made it): push subscriptions were')
        out('dropped; every device must turn notifications on again (Settings, Notifications).')
      }
      out('Start the server on it; a newer hark upgrades the schema at start.')
    }
    return 0
  }
  const [verb, ...rest] = afterNoun
  const command = `${noun ?? ''} ${verb ?? ''}`
  const args = parseArgs(rest, ['data', 'name', 'user', 'label', 'config'], ['owner'])
  const dataDir = dataDirFrom(args, env)
  refuseForeignRoot(dataDir)
  const open = () => {
    prepareDataDir(dataDir)
    const db = openDatabase(databasePath(dataDir))
    return { db, store: openStores(db), clock: systemClock }
  }
  const needUser = () => {
    const user = flagString(args, 'user')
    if (!user) throw new UsageError(`hark admin ${command} needs --user EMAIL`)
    return user
  }
  switch (command) {
    case 'user add': {
      const [email] = args.positionals
      if (!email || args.positionals.length > 1)
        throw new UsageError('usage: hark admin user add EMAIL')
      const p = open()
      try {
        const user = addUser(p, {
          email,
          name: flagString(args, 'name'),
          owner: args.flags.has('owner'),
        })
        out(`Added ${user.email}${user.is_owner ? ' as the owner' : ''} (${user.id}).`)
      } finally {
        p.db.close()
      }
      return 0
    }
    case 'channel add': {
      const email = needUser()
      const p = open()
      try {
        const { channel, token } = addChannel(p, { email, label: flagString(args, 'label') })
        out(`Created channel ${channel.id} "${channel.label}" for ${email}.`)
        out('Agent token (shown once, store it now):')
        out(token)
      } finally {
        p.db.close()
      }
      return 0
    }
    case 'token add': {
      const email = needUser()
      const p = open()
      try {
        const { token, row } = addPersonToken(p, { email, label: flagString(args, 'label') })
        out(`Created person token ${row.id} for ${email}.`)
        out('Person token (shown once, store it now):')
        out(token)
      } finally {
        p.db.close()
      }
      return 0
    }
    case 'vapid rotate': {
      const p = open()
      try {
        // Push services bind each subscription to the key it was made with: none survives.
        out('Warning: rotating the VAPID keys drops every push subscription; every device must')
        out('turn notifications on again (Settings, Notifications).')
        rotateVapid(dataDir)
        const dropped = p.db.transaction(() => p.store.push.removeAll()).immediate()
        out(`Rotated the VAPID keys in ${dataDir}; dropped ${dropped} subscriptions.`)
      } finally {
        p.db.close()
      }
      return 0
    }
    default:
      throw new UsageError(`unknown admin command "${command.trim()}"\n\n${ADMIN_HELP}`)
  }
}
