import type { PersonClient } from '../../src/agent/client.ts'
import { startTestServer, type TestServer, type TestServerOptions } from '../harness.ts'
import { type Receiver, startReceiver, type TestSubscription } from './receiver.ts'

export interface PushFixture {
  s: TestServer
  receiver: Receiver
  /** The owner in the app (a browser session): only a session may turn notifications on. */
  app: PersonClient
  /** Makes a browser-side subscription on the receiver and registers it for the owner. */
  subscribe(id: string, name?: string): Promise<{ device: { id: string }; sub: TestSubscription }>
  close(): Promise<void>
}

/** A test server whose pushes go to a local receiver (allowed by `pushAllowHosts`). */
export async function startPushServer(options: TestServerOptions = {}): Promise<PushFixture> {
  const receiver = startReceiver()
  const s = await startTestServer({ pushAllowHosts: ['127.0.0.1'], ...options })
  // Retries come quickly, so a failed push is retried within a test.
  s.ctx.push.retryBaseMs = 20
  const app = await s.sessionClient()
  // On disk before the test goes on, as the harness's own provisioning: a test may back up the
  // data directory at once.
  await s.ctx.writes.flush()
  return {
    s,
    receiver,
    app,
    async subscribe(id, name) {
      const sub = receiver.subscription(id)
      const { subscription } = await app.call<{ subscription: { id: string } }>(
        'POST',
        '/v1/app/push/subscriptions',
        { json: { endpoint: sub.endpoint, keys: sub.keys, name } },
      )
      return { device: subscription, sub }
    },
    async close() {
      await s.close()
      receiver.close()
    },
  }
}
