import { afterAll, beforeAll } from 'bun:test'
import { type PgCluster, startCluster } from './cluster.ts'

/**
 * One cluster for the tests of the `describe` this is called in: started before them, stopped
 * after them. Its databases are asked of the handle once the tests run.
 */
export function useCluster(): Pick<PgCluster, 'database' | 'url' | 'dir'> {
  let cluster: PgCluster | undefined
  beforeAll(async () => {
    cluster = await startCluster()
  }, 60_000)
  afterAll(async () => {
    await cluster?.close()
  }, 60_000)
  const started = () => {
    if (!cluster) throw new Error('the cluster is asked for before it started')
    return cluster
  }
  return {
    get url() {
      return started().url
    },
    get dir() {
      return started().dir
    },
    database: (name, template) => started().database(name, template),
  }
}
