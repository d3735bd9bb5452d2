import { withDatabase } from '../../src/cli/admin/command.ts'
import { type Config, DEFAULTS } from '../../src/core/config.ts'
import type { Ctx } from '../../src/core/context.ts'
import type { Logger } from '../../src/core/log.ts'
import { addChannel, addUser } from '../../src/people/service.ts'
import type { ContextOptions } from '../../src/server/context.ts'
import { createPgContext } from '../../src/server/pg/context.ts'
import { tempDir } from '../harness.ts'

/** An instance in process on a Postgres database (issue 20's tests), and its first person. */

export const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} }

/** The owner `email` and a channel of theirs, made through `hark admin`'s own path. */
export async function provisionOwner(url: string, email = 'o@example.com') {
  return await withDatabase(
    tempDir('hark-admin-'),
    async (p) => {
      const user = await addUser(p, { email, owner: true })
      const { channel, token } = await addChannel(p, { email })
      return { user, channel, token }
    },
    url,
  )
}

/** `createPgContext` on `url` with a data directory of its own, quiet unless told otherwise. */
export async function pgInstance(
  url: string,
  config: Partial<Config> = {},
  options: ContextOptions = { log: quiet },
): Promise<Ctx> {
  return await createPgContext(
    {
      ...DEFAULTS,
      dataDir: tempDir('hark-pg-instance-'),
      databaseUrl: url,
      port: 0,
      baseUrl: 'http://hark.test',
      ...config,
    },
    options,
  )
}
