import { openDatabase } from '../db/database.ts'
import { addChannel, addPersonToken, addUser } from '../people/service.ts'
import { systemClock } from '../server/clock.ts'
import { dataDirFrom } from '../server/config.ts'
import { databasePath, openStores, prepareDataDir } from '../server/context.ts'
import { flagString, parseArgs, UsageError } from './args.ts'

export const ADMIN_HELP = `Operator commands; they work on the data directory directly and are safe while
the server runs.

  hark admin user add EMAIL [--name NAME] [--owner] [--data DIR]
  hark admin channel add --user EMAIL [--label LABEL] [--data DIR]
      prints the new agent token alone on the last line
  hark admin token add --user EMAIL [--label LABEL] [--data DIR]
      prints a new person token alone on the last line

--data defaults to $HARK_DATA, else ./data.`

type Out = (line: string) => void

/** Runs `hark admin ...`; returns the exit code. */
export function admin(argv: string[], env: Record<string, string | undefined>, out: Out): number {
  const [noun, verb, ...rest] = argv
  const command = `${noun ?? ''} ${verb ?? ''}`
  const args = parseArgs(rest, ['data', 'name', 'user', 'label'], ['owner'])
  const dataDir = dataDirFrom(args, env)
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
    default:
      throw new UsageError(`unknown admin command "${command.trim()}"\n\n${ADMIN_HELP}`)
  }
}
