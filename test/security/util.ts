import type { Database } from 'bun:sqlite'
import { connect } from 'node:net'

/**
 * Every row of every table, as text: a request that was refused must leave this unchanged
 * ("nothing written"), whatever table it might have touched. A token's `last_used_at` is left
 * out: checking a token stamps it, which is bookkeeping of the check, not the request's write.
 */
export function databaseImage(db: Database): string {
  const tables = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all() as { name: string }[]
  return JSON.stringify(
    tables.map(({ name }) => [name, db.query(`SELECT * FROM "${name}"`).all()]),
    (key, v) =>
      key === 'last_used_at'
        ? undefined
        : v instanceof Uint8Array
          ? Buffer.from(v).toString('hex')
          : v,
  )
}

/** Arrays nested `depth` deep around a zero: `[[[0]]]`. */
export const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`

/**
 * One HTTP/1.1 exchange written byte for byte (any Host, any framing), over loopback; the answer
 * as status and body. Bounded: the socket is closed after `timeoutMs`.
 */
export function rawHttp(
  port: number,
  head: string,
  body: Uint8Array | string = '',
  timeoutMs = 5000,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => socket.destroy(new Error('no answer in time')), timeoutMs)
    socket.on('connect', () => {
      socket.write(head)
      socket.write(body)
    })
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))
      if (length && text.length >= end + 4 + Number(length[1])) socket.end()
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('utf8')
      const end = text.indexOf('\r\n\r\n')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      resolve({ status, headers: text.slice(0, end), body: text.slice(end + 4) })
    })
  })
}
