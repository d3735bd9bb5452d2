import type { Message } from '../../messages/schema.ts'
import { summaryOf } from '../actions.ts'
import { requestHash, warnUnsigned } from '../trust.ts'
import type { HookDeps } from './deps.ts'

/**
 * An allow the person's passkey did not sign: not reported. Said on stderr and in the channel,
 * since from the phone it looked answered. Returns why, for a harness that must say no.
 */
export async function unsignedAllow(
  deps: HookDeps,
  question: Message,
  answer: unknown,
  action: { tool: string; input: unknown },
  askedAt: number,
): Promise<string | undefined> {
  if (!deps.verifyAllow) return undefined
  const check = deps.verifyAllow(question, answer, requestHash(action.tool, action.input), askedAt)
  if (check.ok) return undefined
  deps.warn(`the allow is not trusted (${check.reason}): not allowed`)
  await warnUnsigned(deps.client(), `"${summaryOf(action)}"`, check.reason)
  return check.reason
}
