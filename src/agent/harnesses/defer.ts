import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../messages/schema.ts'
import type { ApprovalAnswer } from '../../shared/blocks.ts'
import { type Action, approvalBlock, summaryOf, titleOf } from '../actions.ts'
import type { AgentClient } from '../client.ts'
import { askPerson, type Reply } from '../person.ts'
import type { Env } from '../profiles.ts'
import { requestHash, verifyAnswer, warnUnsigned } from '../trust.ts'
import { stateDir } from './pending.ts'

/**
 * Headless runs (`claude -p`, CI): `hark hook claude --defer-after SECONDS` on PreToolUse. Claude
 * Code 2.1.330 honours `permissionDecision: "defer"` there (measured, docs/decisions.md): the run
 * stops at once with `stop_reason: "tool_deferred"` and the call in `deferred_tool_use`, and
 * `claude -p --resume SESSION` runs PreToolUse again for the same call. So the hook asks the
 * person, waits the short wait, and with no answer leaves the card open on the phone and defers;
 * on resume the same call finds that card and its answer (`hark resume claude` waits for it).
 *
 * The deferred cards are this agent's own record, one small file each under
 * `$XDG_STATE_HOME/hark/deferred/<session>/<message id>` = `{key, asked_at}`: only an answer to a
 * card recorded here counts, checked against the pinned passkeys like any allow.
 */
export interface DeferDeps {
  client: () => AgentClient
  env: Env
  profile: string
  /** The short wait before deferring. */
  deferMs: number
  warn: (line: string) => void
  onAsked: (message: Message) => void
  /** False only with --allow-unsigned. */
  verify: boolean
}

interface Deferred {
  key: string
  asked_at: number
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/
const hashed = (text: string) => createHash('sha256').update(text).digest('hex')
const dirOf = (env: Env, session: string) =>
  join(stateDir(env), 'deferred', hashed(session).slice(0, 32))

/** The session's deferred cards, by message id. */
export function deferredCards(env: Env, session: string): Map<string, Deferred> {
  const dir = dirOf(env, session)
  const out = new Map<string, Deferred>()
  let names: string[] = []
  try {
    names = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names.filter((n) => SAFE_ID.test(n))) {
    try {
      out.set(name, JSON.parse(readFileSync(join(dir, name), 'utf8')) as Deferred)
    } catch {
      // A torn file: that card is asked anew.
    }
  }
  return out
}

function keep(env: Env, session: string, id: string, card: Deferred) {
  if (!SAFE_ID.test(id)) return
  const dir = dirOf(env, session)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(join(dir, id), JSON.stringify(card), { mode: 0o600 })
}

const forget = (env: Env, session: string, id: string) => {
  if (SAFE_ID.test(id)) rmSync(join(dirOf(env, session), id), { force: true })
}

const output = (permissionDecision: 'allow' | 'deny' | 'defer', reason?: string) => ({
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision,
    ...(reason ? { permissionDecisionReason: reason } : {}),
  },
})

/** PreToolUse: the person's decision, or `defer` while they have not answered. */
export async function preToolUse(action: Action & { session: string }, deps: DeferDeps) {
  const key = requestHash(action.tool, action.input)
  const cards = deferredCards(deps.env, action.session)
  const client = deps.client()
  let found = [...cards].find(([, c]) => c.key === key)
  let reply: Reply | undefined
  if (found) {
    const [id, card] = found
    const read = await client.ask(id, Math.round(deps.deferMs / 1000))
    const status = read.message.ask?.status
    if (status === 'answered') {
      // Checked as the card recorded here: a record of another question the server hands back
      // carries a proof over another id, and fails.
      reply = { status: 'answered', answer: read.answer, message: { ...read.message, id } }
    } else if (status === 'open') {
      return output('defer')
    } else {
      forget(deps.env, action.session, id)
      found = undefined
    }
    if (reply) return decide(action, reply, card.asked_at, deps)
  }
  const askedAt = Date.now()
  let id: string | undefined
  const asked = await askPerson(
    client,
    { title: titleOf(action), blocks: [approvalBlock(action)] },
    {
      waitMs: deps.deferMs,
      onOutage: deps.warn,
      // Kept before the wait: a run killed meanwhile still finds its card on resume.
      onAsked: (message) => {
        id = message.id
        keep(deps.env, action.session, message.id, { key, asked_at: askedAt })
        deps.onAsked(message)
      },
      // The card stays open on the phone: the answer is read on resume.
      leaveOpen: true,
    },
  )
  if (asked.status === 'timeout') return output('defer')
  if (id) forget(deps.env, action.session, id)
  if (asked.status !== 'answered') return undefined
  return decide(action, asked, askedAt, deps)
}

async function decide(action: Action, reply: Reply, askedAt: number, deps: DeferDeps) {
  if (reply.status !== 'answered') return undefined
  forget(deps.env, action.session ?? '', reply.message.id)
  const answer = reply.answer as ApprovalAnswer
  if (answer?.decision === 'deny') {
    return output('deny', answer.message?.trim() || 'The person denied this from Hark.')
  }
  if (answer?.decision !== 'allow') return undefined
  if (deps.verify) {
    const check = verifyAnswer(deps.env, deps.profile, reply.message, {
      request_hash: requestHash(action.tool, action.input),
      answer,
      approval: true,
      asked_at: askedAt,
    })
    if (!check.ok) {
      deps.warn(`the allow is not trusted (${check.reason}): not allowed`)
      await warnUnsigned(deps.client(), `"${summaryOf(action)}"`, check.reason)
      return output('deny', `Not allowed: ${check.reason}.`)
    }
  }
  return output('allow')
}
