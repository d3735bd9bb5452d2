import { createHash } from 'node:crypto'
import type { CDPSession, Page } from 'playwright-core'
import { checkAnswerProof, type ProofCheck } from '../../src/agent/proof.ts'
import type { Message } from '../../src/messages/schema.ts'
import { approvalRequest, questionRequest } from '../../src/shared/canonical.ts'
import type { TestServer } from '../harness.ts'

/**
 * Signed answers in a real Chromium (PRODUCT.md "Trusted answers"): the person's passkey is
 * Chromium's virtual authenticator, registered through the app's own Settings; what the app
 * signs is then checked the way an agent checks it (src/agent/proof.ts), with the keys the
 * agent pinned from `GET /v1/channel` and the request hash the agent computes itself, never
 * anything the app or the server said.
 */

/** Chromium's virtual authenticator, with the controls a test needs over it. */
export interface Authenticator {
  id: string
  cdp: CDPSession
  /** false: the next prompt fails user verification, as a person cancelling it does. */
  setVerified(verified: boolean): Promise<void>
  /** Signatures made so far by its one credential (each prompt makes one). */
  signCount(): Promise<number>
  remove(): Promise<void>
}

export async function virtualAuthenticator(page: Page): Promise<Authenticator> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId: id } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return {
    id,
    cdp,
    setVerified: async (isUserVerified) => {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId: id, isUserVerified })
    },
    signCount: async () => {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: id })
      return credentials.reduce((n, c) => n + c.signCount, 0)
    },
    remove: async () => {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: id })
    },
  }
}

/** Adds a passkey on this device in the app's Settings, as the person does; answers its name. */
export async function registerPasskey(page: Page, server: TestServer): Promise<string> {
  await page.goto(`${server.url}/settings#passkeys`)
  const section = page.getByRole('region', { name: 'Passkeys' })
  await section.getByRole('button', { name: 'Add a passkey on this device' }).click()
  await section.locator('li').first().waitFor()
  const user = await server.ctx.store.users.byEmail(server.ownerEmail)
  const [passkey] = await server.ctx.store.passkeys.byUser(user?.id as string)
  return passkey?.name as string
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** What the agent asked, as it knows it: the request hash is its own, from its own request. */
export interface Asked {
  message: Message
  /** The agent's clock when it asked. */
  askedAt: number
  /** An approval's tool and input, as the agent sent them. */
  tool?: string
  input?: unknown
  /** Another question's input blocks, as the agent sent them. */
  inputs?: unknown[]
}

/**
 * The agent's verdict on the proof its answer came with: the approvers it pins from
 * `GET /v1/channel`, the claim rebuilt from its channel, its question, the request hash it
 * computes itself and the answer it got.
 */
export async function agentCheck(
  server: TestServer,
  asked: Asked,
  got: { message: Message; answer: unknown },
  answer: unknown = got.answer,
): Promise<ProofCheck> {
  const { approvers } = await server.agent.channel()
  const requestHash =
    asked.tool !== undefined
      ? sha256(approvalRequest(asked.tool, asked.input))
      : sha256(questionRequest(asked.inputs ?? []))
  return checkAnswerProof(
    got.message.ask?.proof,
    {
      channel_id: server.channelId,
      message_id: asked.message.id,
      request_hash: requestHash,
      answer,
      approval: asked.tool !== undefined,
      asked_at: asked.askedAt,
      now: Date.now(),
    },
    { ...approvers, keys: approvers.keys.map((k) => ({ ...k, jwk: k.jwk as JsonWebKey })) },
  )
}

/** Counts the answers the page posts (`POST /v1/app/messages/:id/answer`). */
export function answerPosts(page: Page): { count(): number } {
  let n = 0
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/v1\/app\/messages\/[^/]+\/answer$/.test(r.url())) n++
  })
  return { count: () => n }
}
