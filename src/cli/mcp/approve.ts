import * as z from 'zod'
import { claudeHook, type HookDeps } from '../../agent/harnesses/claude.ts'
import { type PendingApprovals, pendingApprovals } from '../../agent/harnesses/pending.ts'
import { decideByPolicy } from '../../agent/policy.ts'
import { askLedger } from '../../agent/trust.ts'
import {
  allowsUnsigned,
  answerCheck,
  DEFAULT_HOOK_WAIT_S,
  signatureCheck,
} from '../harness/hook.ts'
import { withdrawOnCancel } from './call.ts'
import { tool } from './tool.ts'

/**
 * `approve`: Claude Code's `--permission-prompt-tool` (PRODUCT.md "Agent harnesses"). In:
 * `{ tool_name, input }`; out: one text item whose text is `{"behavior":"allow","updatedInput"}`
 * or `{"behavior":"deny","message"}`. It asks exactly as `hark hook claude` does (the same
 * approval card; AskUserQuestion as choices answered through `updatedInput.answers`), but a
 * permission prompt tool must decide: no answer in time is a deny that says so, never an allow.
 */
const NOTHING_PENDING: PendingApprovals = { add() {}, remove() {}, list: () => [] }

const waitSeconds = (raw: string | undefined) => {
  const n = Number(raw)
  return raw !== undefined && raw !== '' && Number.isFinite(n) && n >= 0 ? n : DEFAULT_HOOK_WAIT_S
}

export const approve = tool({
  name: 'approve',
  description:
    "Ask the person to allow or deny one tool call (Claude Code's --permission-prompt-tool). Returns JSON text: {behavior: 'allow', updatedInput} or {behavior: 'deny', message}.",
  inputSchema: {
    tool_name: z.string().min(1).describe('the tool asking for permission'),
    input: z.record(z.string(), z.unknown()).describe("the tool's input"),
    tool_use_id: z.string().optional(),
  },
  async run(a, { client, env, session: connection }, call) {
    const seconds = waitSeconds(env.HARK_HOOK_WAIT)
    const notes: string[] = []
    const ledger = askLedger(env, connection.profile)
    // The call carries no session, but Claude Code starts its MCP servers with the session's
    // id in their environment (measured with 2.1.330). With it the card names its session, and
    // the question is tracked as the hook's are: when Hark's hooks are installed too, Claude
    // Code asks both at once, and once the hook's answer wins it drops this call without a
    // word to the person. The hooks' PostToolUse / Stop then withdraw this card as well, so it
    // does not stay open on the phone for an action already decided.
    const session = env.CLAUDE_CODE_SESSION_ID || undefined
    // Claude Code cancels the call when the person answers in the terminal or interrupts: the
    // card on the phone is withdrawn then, as the hook's is when its process is ended.
    const cancel = withdrawOnCancel(call, client)
    const deps: HookDeps = {
      client: () => client,
      pending: (id) => (session ? pendingApprovals(env, id) : NOTHING_PENDING),
      waitMs: seconds * 1000,
      reply: false,
      warn: (line) => notes.push(line),
      onSending: () => {},
      onAsked: (message) => {
        ledger.note(message.id)
        cancel.asked(message.id)
      },
      // The person's signed rules decide first, as in the hook (src/agent/policy.ts).
      policy: (action, summary) =>
        decideByPolicy(client, env, connection.profile, action, summary, (line) =>
          notes.push(line),
        ),
      ...(allowsUnsigned(false, env)
        ? {}
        : { verifyAllow: signatureCheck(ledger), verifyAnswer: answerCheck(ledger) }),
    }
    const output = await claudeHook(
      {
        hook_event_name: 'PermissionRequest',
        tool_name: a.tool_name,
        tool_input: a.input,
        ...(session ? { session_id: session } : {}),
      },
      deps,
    ).finally(cancel.done)
    const decision = (output?.hookSpecificOutput as { decision?: Record<string, unknown> })
      ?.decision
    if (decision?.behavior === 'allow') {
      return { behavior: 'allow', updatedInput: decision.updatedInput ?? a.input }
    }
    if (decision?.behavior === 'deny') return { behavior: 'deny', message: decision.message }
    // An allow, or AskUserQuestion's answers, that the person's passkey did not sign.
    const unsigned = notes.find((n) => / is not trusted \(/.test(n))
    return {
      behavior: 'deny',
      message: unsigned
        ? `Not allowed: ${unsigned.replace(/: (not allowed|taken as no answer)$/, '')}.`
        : `Not allowed: no answer from the person within ${seconds} s.`,
    }
  },
})
