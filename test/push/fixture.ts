import type { Clock } from '../../src/core/clock.ts'
import type { Config } from '../../src/server/config.ts'
import { startTestServer, type TestServer } from '../harness.ts'
import { type Receiver, startReceiver, type TestSubscription } from './receiver.ts'

export interface PushFixture {
  s: TestServer
  receiver: Receiver
  /** Makes a browser-side subscription on the receiver and registers it for the owner. */
  subscribe(id: string, name?: string): Promise<{ device: { id: string }; sub: TestSubscription }>
  close(): void
}

/** A test server whose pushes go to a local receiver (allowed by `pushAllowHosts`). */
export function startPushServer(
  overrides: Partial<Config> = {},
  options: { clock?: Clock } = {},
): PushFixture {
  const receiver = startReceiver()
  const s = startTestServer({ pushAllowHosts: ['127.0.0.1'], ...overrides }, options)
  s.ctx.push.retryBaseMs = 20
  return {
    s,
    receiver,
    async subscribe(id, name) {
      const sub = receiver.subscription(id)
      const { subscription } = await s.person.call<{ subscription: { id: string } }>(
        'POST',
        '/v1/app/push/subscriptions',
        { json: { endpoint: sub.endpoint, keys: sub.keys, name } },
      )
      return { device: subscription, sub }
    },
    close() {
      s.close()
      receiver.close()
    },
  }
}
