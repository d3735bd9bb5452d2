import { createHash } from 'node:crypto'
import type { Message, MessageBody } from '../messages/schema.ts'
import { isInput } from '../shared/blocks.ts'
import { approvalRequest, questionRequest } from '../shared/canonical.ts'
import { fingerprint } from '../shared/fingerprint.ts'
import type { AgentClient } from './client.ts'
import { askPerson } from './person.ts'
import { type Env, loadConfig, updateConfig } from './profiles.ts'
import { checkAnswerProof, type PinnedApprovers, type PinnedKey, type ProofCheck } from './proof.ts'

/**
 * The keys an agent trusts to sign its person's answers: pinned in the profile when the machine
 * is connected (trust on first use), used to check every signed answer, and changed only with
 * the person's signature by a key already pinned (PRODUCT.md "Trusted answers").
 */
export type Pinned = PinnedApprovers & {
  channel_id: string
  /**
   * Questions whose signed answer this agent acted on (id → when, ms): a proof acts once.
   * Without it a server could hand an allow back as the answer to a later question for the
   * same action, with the earlier question's record, and a passkey that keeps no counter
   * (synced passkeys report 0) would not tell.
   */
  used?: Record<string, number>
  /** Ids of the questions asked under this profile, with when (kept a day): see askLedger. */
  asked?: Record<string, number>
  /** Policies seen revoked with the person's signature (id → when they would have expired):
   * never taken again, whatever the server hands back later (src/agent/policy.ts). */
  revoked?: Record<string, number>
}

/** How long an acted-on question is remembered; a proof is only taken for questions asked
 * within minutes of its signing, so this is ample. */
const USED_KEPT_MS = 24 * 3600_000

export const pinnedApprovers = (env: Env, profile: string): Pinned | undefined =>
  loadConfig(env).profiles[profile]?.approvers as Pinned | undefined

export function pin(env: Env, profile: string, approvers: Pinned): void {
  updateConfig(env, (config) => {
    const entry = config.profiles[profile] ?? {}
    config.profiles[profile] = { ...entry, approvers }
  })
}

/** What the channel reports now, for the channel the token belongs to. */
export async function reportedApprovers(client: AgentClient): Promise<Pinned> {
  const { channel, approvers } = await client.channel()
  return {
    channel_id: channel.id,
    rp_id: approvers.rp_id,
    origin: approvers.origin,
    keys: approvers.keys as PinnedKey[],
  }
}

export const describeKeys = (keys: readonly PinnedKey[]) =>
  keys.map((k) => `  ${k.name}  ${fingerprint(k)}`).join('\n')

/** `request_hash` as the agent computes it from what it asked, never read from the server. */
export const requestHash = (tool: string, input: unknown) =>
  createHash('sha256').update(approvalRequest(tool, input)).digest('hex')

/** `request_hash` of another question asked with proof, from the body as this side sent it. */
export const questionHash = (body: MessageBody) =>
  createHash('sha256')
    .update(questionRequest((body.blocks ?? []).filter((b) => isInput(b))))
    .digest('hex')

/**
 * Checks the proof of an answer the agent is about to act on, against the keys pinned in
 * `profile`; a valid one moves the pinned counter forward and is remembered: it acts once.
 */
export function verifyAnswer(
  env: Env,
  profile: string,
  question: Message,
  expected: { request_hash: string; answer: unknown; approval: boolean; asked_at: number },
): ProofCheck {
  return acceptProof(env, profile, question.id, question.ask?.proof, expected)
}

/**
 * The one check of a signed answer against `profile`'s pinned keys, for anything answered with
 * a proof (a question, or a secret request: `id` is then the request's): the claim rebuilt from
 * `expected` and the pinned channel; a valid one moves the pinned counter forward and is
 * remembered under `id`, so it acts once.
 */
export function acceptProof(
  env: Env,
  profile: string,
  id: string,
  proof: unknown,
  expected: { request_hash: string; answer: unknown; approval: boolean; asked_at: number },
): ProofCheck {
  const pinned = pinnedApprovers(env, profile)
  const check = checkAnswerProof(
    proof,
    {
      // The channel the keys were pinned for: a proof made in another channel does not count.
      channel_id: pinned?.channel_id ?? '',
      message_id: id,
      request_hash: expected.request_hash,
      answer: expected.answer,
      approval: expected.approval,
      asked_at: expected.asked_at,
      now: Date.now(),
    },
    pinned,
  )
  if (!check.ok || !pinned) return check
  let replayed = false
  updateConfig(env, (config) => {
    const entry = config.profiles[profile] ?? {}
    const latest = (entry.approvers as Pinned | undefined) ?? pinned
    replayed = latest.used?.[id] !== undefined
    if (replayed) return
    const kept = Object.entries(latest.used ?? {}).filter(
      ([, at]) => at > Date.now() - USED_KEPT_MS,
    )
    const approvers: Pinned = {
      ...latest,
      counters: { ...latest.counters, [check.credential_id]: check.counter },
      used: { ...Object.fromEntries(kept), [id]: Date.now() },
    }
    // Kept as long as `used`: the batch's other items arrive within minutes.
    const batches = Object.entries(latest.batches ?? {}).filter(
      ([, at]) => at > Date.now() - USED_KEPT_MS,
    )
    if (check.batch !== undefined) batches.push([check.batch, Date.now()])
    if (batches.length > 0) approvers.batches = Object.fromEntries(batches)
    else delete approvers.batches
    config.profiles[profile] = { ...entry, approvers }
  })
  if (replayed) return { ok: false, reason: 'this signed answer was already acted on (a replay)' }
  return check
}

/**
 * The questions this process asked, and which of them the server gave an id it had already given
 * to an earlier question of this profile. A server choosing ids could otherwise hand back the
 * id of an earlier question the person allowed (and whose allow this agent never acted on, held
 * back by that same server) and then its signed answer as the answer to the new one. Every id a
 * send returns is recorded in the profile for a day; a repeated one is never trusted, and only
 * an answer to a question this process asked counts.
 */
export function askLedger(env: Env, profile: string) {
  const asked = new Set<string>()
  const reused = new Set<string>()
  return {
    note(messageId: string): void {
      asked.add(messageId)
      let seen = false
      // Best effort: a profile that cannot be written loses only this memory across processes
      // (this process still trusts only the questions it asked), never the question itself.
      try {
        updateConfig(env, (config) => {
          const entry = config.profiles[profile]
          const approvers = entry?.approvers as Pinned | undefined
          if (!entry || !approvers) return
          seen = approvers.asked?.[messageId] !== undefined
          const kept = Object.entries(approvers.asked ?? {}).filter(
            ([, at]) => at > Date.now() - USED_KEPT_MS,
          )
          entry.approvers = {
            ...approvers,
            asked: { ...Object.fromEntries(kept), [messageId]: Date.now() },
          } as Pinned
        })
      } catch {
        // See above.
      }
      if (seen) reused.add(messageId)
    },
    verify(
      question: Message,
      expected: { request_hash: string; answer: unknown; approval: boolean; asked_at: number },
    ): ProofCheck {
      if (!asked.has(question.id)) {
        return { ok: false, reason: 'the answer is for a question this agent did not ask' }
      }
      if (reused.has(question.id)) {
        return { ok: false, reason: 'the server reused the id of an earlier question (a replay)' }
      }
      return verifyAnswer(env, profile, question, expected)
    },
  }
}

export type AskLedger = ReturnType<typeof askLedger>

export type Refresh =
  | { status: 'unchanged' | 'first-use' | 'removed' | 'approved'; pinned: Pinned }
  | { status: 'refused'; reason: string }

/**
 * `hark keys refresh`: takes the channel's current keys. With none pinned yet, on first use.
 * A key taken away needs nothing; a new key needs the person's signed allow, made with a key
 * already pinned (the person confirms the new passkey in the app).
 */
export async function refreshKeys(
  client: AgentClient,
  env: Env,
  profile: string,
  waitMs: number,
  onAsked?: (message: Message) => void,
): Promise<Refresh> {
  const current = await reportedApprovers(client)
  const pinned = pinnedApprovers(env, profile)
  if (!pinned || pinned.keys.length === 0) {
    pin(env, profile, current)
    return { status: 'first-use', pinned: current }
  }
  if (pinned.channel_id !== current.channel_id) {
    return { status: 'refused', reason: 'the token now belongs to another channel; connect anew' }
  }
  if (pinned.rp_id !== current.rp_id || pinned.origin !== current.origin) {
    return {
      status: 'refused',
      reason: `the server now names another site (${current.origin}); connect anew with "hark init"`,
    }
  }
  const known = new Set(pinned.keys.map((k) => k.id))
  const added = current.keys.filter((k) => !known.has(k.id))
  const kept = pinned.keys.filter((k) => current.keys.some((c) => c.id === k.id))
  if (added.length === 0) {
    const next = { ...pinned, keys: kept }
    if (kept.length === pinned.keys.length) return { status: 'unchanged', pinned }
    pin(env, profile, next)
    return { status: 'removed', pinned: next }
  }
  const tool = 'hark: trust new passkeys'
  const input = { add: added.map((k) => ({ id: k.id, name: k.name, fingerprint: fingerprint(k) })) }
  const askedAt = Date.now()
  const ledger = askLedger(env, profile)
  const reply = await askPerson(
    client,
    {
      title: 'Trust a new passkey for this agent?',
      text: `Approve with a passkey this agent already trusts. New:\n${describeKeys(added)}`,
      blocks: [
        {
          type: 'approval',
          id: 'approval',
          tool,
          input,
          summary: `Trust ${added.map((k) => k.name).join(', ')}`,
        },
      ],
    },
    {
      waitMs,
      onAsked: (message) => {
        ledger.note(message.id)
        onAsked?.(message)
      },
    },
  )
  if (reply.status !== 'answered')
    return { status: 'refused', reason: `the question was ${reply.status}` }
  const answer = reply.answer as { decision?: string }
  if (answer?.decision !== 'allow') return { status: 'refused', reason: 'the person denied it' }
  const check = ledger.verify(reply.message, {
    request_hash: requestHash(tool, input),
    answer: reply.answer,
    approval: true,
    asked_at: askedAt,
  })
  if (!check.ok)
    return {
      status: 'refused',
      reason: `the approval is not signed by a pinned passkey: ${check.reason}`,
    }
  const latest = pinnedApprovers(env, profile) ?? pinned
  const next = { ...latest, keys: [...kept, ...added] }
  pin(env, profile, next)
  return { status: 'approved', pinned: next }
}

/**
 * Tells the person that an answer was not acted on for want of a valid signature: from their
 * phone it looked answered, so they must learn here that it was not. Best effort.
 */
export async function warnUnsigned(client: AgentClient, what: string, reason: string) {
  try {
    await client.send({
      body: {
        title: 'Not acted on: the answer was not signed',
        text: `${what} was not used: ${reason}. Answer in the app with your passkey, or check "hark keys" on the agent's machine.`,
      },
    })
  } catch {
    // The warning on stderr stands.
  }
}
