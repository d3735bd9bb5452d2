import { createDecipheriv, createECDH, createHmac, randomBytes } from 'node:crypto'
import type { Server } from 'bun'

/**
 * A stand-in push service on 127.0.0.1, and the browser's side of a subscription: its own
 * P-256 key pair and auth secret, made here, so the test decrypts what the server sent
 * exactly as a browser would (RFC 8291 on RFC 8188 aes128gcm), padding and all.
 */

const hmac = (key: Uint8Array, data: Uint8Array) => createHmac('sha256', key).update(data).digest()

export interface TestSubscription {
  id: string
  endpoint: string
  keys: { p256dh: string; auth: string }
  decrypt(body: Uint8Array): string
}

export function makeSubscription(base: string, id: string): TestSubscription {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const uaPublic = ecdh.getPublicKey() // 65 bytes, uncompressed
  const authSecret = randomBytes(16)
  return {
    id,
    endpoint: `${base}/push/${id}`,
    keys: { p256dh: uaPublic.toString('base64url'), auth: authSecret.toString('base64url') },
    decrypt(body) {
      const buf = Buffer.from(body)
      // Header: salt (16) | record size (4) | key id length (1) | key id (the sender's key).
      const salt = buf.subarray(0, 16)
      const recordSize = buf.readUInt32BE(16)
      const idLength = buf[20] as number
      const asPublic = buf.subarray(21, 21 + idLength)
      const records = buf.subarray(21 + idLength)
      if (idLength !== 65) throw new Error(`key id is ${idLength} bytes, not a P-256 point`)
      if (records.length > recordSize) throw new Error('more than one record')
      const ecdhSecret = ecdh.computeSecret(asPublic)
      // RFC 8291 §3.4: IKM from the ECDH secret, keyed by the auth secret and both public keys.
      const prkKey = hmac(authSecret, ecdhSecret)
      const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic])
      const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])]))
      // RFC 8188 §2.2/2.3: content key and nonce from the salt.
      const prk = hmac(salt, ikm)
      const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16)
      const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12)
      const tag = records.subarray(records.length - 16)
      const decipher = createDecipheriv('aes-128-gcm', cek, nonce)
      decipher.setAuthTag(tag)
      const plain = Buffer.concat([
        decipher.update(records.subarray(0, records.length - 16)),
        decipher.final(),
      ])
      // The last record ends with the delimiter 0x02, then zero padding.
      let end = plain.length - 1
      while (end >= 0 && plain[end] === 0) end--
      if (plain[end] !== 2) throw new Error('missing the last-record delimiter')
      return plain.subarray(0, end).toString('utf8')
    },
  }
}

export interface Received {
  subscription: string
  headers: Headers
  /** The decrypted payload, exactly as a browser's worker would get it. */
  text: string
  /** The decrypted JSON payload, parsed. */
  payload: Record<string, unknown> & {
    actions?: { action: string; title: string; answer: unknown }[]
  }
  at: number
}

export interface Receiver {
  url: string
  received: Received[]
  /** Every request, including refused ones: `[subscription id, status]`. */
  attempts: [string, number][]
  subscription(id: string): TestSubscription
  /** The next statuses this subscription answers (then 201 again). */
  answer(id: string, ...statuses: (number | { status: number; retryAfter?: string })[]): void
  /** Waits until `n` pushes in all were received. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>
  close(): void
}

export function startReceiver(): Receiver {
  const subs = new Map<string, TestSubscription>()
  const scripted = new Map<string, (number | { status: number; retryAfter?: string })[]>()
  const received: Received[] = []
  const attempts: [string, number][] = []
  const server: Server<unknown> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const id = new URL(request.url).pathname.replace('/push/', '')
      const body = new Uint8Array(await request.arrayBuffer())
      const next = scripted.get(id)?.shift()
      const script = typeof next === 'number' ? { status: next } : next
      if (script) {
        attempts.push([id, script.status])
        const headers: Record<string, string> = script.retryAfter
          ? { 'retry-after': script.retryAfter }
          : {}
        return new Response(null, { status: script.status, headers })
      }
      const sub = subs.get(id)
      if (!sub) return new Response(null, { status: 404 })
      if (request.headers.get('content-encoding') !== 'aes128gcm') {
        return new Response('bad encoding', { status: 400 })
      }
      if (!/^vapid t=.+, k=.+$/.test(request.headers.get('authorization') ?? '')) {
        return new Response('no vapid', { status: 401 })
      }
      attempts.push([id, 201])
      const text = sub.decrypt(body)
      received.push({
        subscription: id,
        headers: request.headers,
        text,
        payload: JSON.parse(text),
        at: performance.now(),
      })
      return new Response(null, { status: 201 })
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  return {
    url,
    received,
    attempts,
    subscription(id) {
      const sub = makeSubscription(url, id)
      subs.set(id, sub)
      return sub
    },
    answer(id, ...statuses) {
      scripted.set(id, [...(scripted.get(id) ?? []), ...statuses])
    },
    async waitFor(n, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`received ${received.length} pushes, wanted ${n}`)
        await Bun.sleep(2)
      }
      return received
    },
    close: () => server.stop(true),
  }
}
