import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startCluster } from './cluster.ts'

/**
 * A test process in miniature (test/pg/cluster-lifetime.test.ts): starts a cluster, prints its
 * directory and its server's pid as one JSON line, then waits to be killed.
 */
const cluster = await startCluster()
const dir = cluster.dir
const pid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
console.log(JSON.stringify({ dir, pid }))
setInterval(() => {}, 60_000)
