import { createHash } from 'node:crypto'
import { summaryOf } from '../../../agent/actions.ts'
import { parseBlocks, type QuestionSpec, splitOptions } from '../../../agent/bodies.ts'
import { CliError, EXIT } from '../../../agent/failures.ts'
import { decideByPolicy } from '../../../agent/policy.ts'
import { type AskOutcome, askQuestion, waitForAnswer } from '../../../agent/questions.ts'
import { askLedger, requestHash, warnUnsigned } from '../../../agent/trust.ts'
import { deadlineAfter } from '../../../agent/waiting.ts'
import type { MessageBody } from '../../../messages/schema.ts'
import { type ApprovalAnswer, isInput } from '../../../shared/blocks.ts'
import { questionRequest } from '../../../shared/canonical.ts'
import { ruleText } from '../../../shared/policy.ts'
import { flagString, flagStrings } from '../../args.ts'
import {
  type AgentCommand,
  type CommandContext,
  messageText,
  positionals,
  secondsFlag,
} from '../command.ts'
import { showValue } from '../io.ts'
import { silentFlag } from './messages.ts'

/** Prints a wait's outcome and gives its exit code: a timeout is 124, a cancel 1. */
function report(c: CommandContext, outcome: AskOutcome): number {
  if (outcome.status === 'timeout') {
    c.io.result(outcome)
    c.io.note(`no answer yet; "hark wait ${outcome.id}" waits again`)
    return EXIT.timeout
  }
  if (outcome.status === 'cancelled') {
    c.io.result(outcome)
    c.io.note(`question ${outcome.id} was cancelled`)
    return EXIT.error
  }
  if (outcome.status === 'expired') c.io.note('the question expired: its defaults stand')
  c.io.result(outcome, showValue(outcome.answer))
  return EXIT.ok
}

const ANSWER_HELP = `Prints the answer: a string as it is, anything else as JSON (a multi choice is an array,
several inputs an object keyed by input id). With --json: {"id","status","answer"}, where status
is answered, expired (the inputs' defaults) or cancelled (exit 1); a timeout prints
{"id","status":"timeout"} and exits 124. The wait survives server restarts and lost
connections (it keeps polling until its timeout).`

export const ask: AgentCommand = {
  name: 'ask',
  summary: 'ask the person a question and wait for the answer',
  help: `Usage: hark ask [TEXT...] INPUT... [flags]

Asks a question and waits for the answer (by default without limit; Ctrl-C stops waiting,
"hark wait ID" resumes). The text is the arguments, or stdin with "-" (only then is stdin
read; a --timeout bounds that read too).

Inputs (at least one; several make a form; ids in brackets):
  --choice A,B,C     pick one of the options [choice]; with --multi, several
  --confirm LABEL    a button to press [confirm]
  --text LABEL       a typed answer [text]
  --number LABEL     a number [number]
  --toggle LABEL     on or off [toggle]
  --block JSON       any block(s), input blocks included (repeatable)

Flags:
  --multi              allow picking several options of each --choice
  --title TITLE        a title above the text
  --expires-in SECONDS the question expires then, and its inputs' defaults become the answer
  --timeout SECONDS    stop waiting after this long (exit 124)
  --file PATH, --image PATH   attach files, as for send
  --silent             no push notification
  --verify             the person signs the answer with a passkey, and it is checked here
                       against the keys pinned at "hark init" (see "hark keys"); an answer
                       without a valid signature is refused (exit 1), never printed. With one
                       approval block (--block '{"type":"approval","tool":..,"input":..}') the
                       rules the person signed decide first, as in "hark hook": an action a rule
                       covers is answered at once ("allowed by rule ..." on stderr), no question

${ANSWER_HELP}`,
  valued: [
    'choice',
    'confirm',
    'text',
    'number',
    'toggle',
    'block',
    'title',
    'expires-in',
    'timeout',
    'file',
    'image',
  ],
  booleans: ['multi', 'silent', 'verify'],
  async run(c) {
    const { args, io } = c
    // The timeout counts from here: reading stdin, uploading and asking are inside it.
    const deadline = deadlineAfter(secondsFlag(args, 'timeout'))
    const expiresMs = secondsFlag(args, 'expires-in')
    const title = flagString(args, 'title')
    // A question always has inputs: its text comes from stdin only with "-".
    const text = await messageText(c, args.positionals, true, deadline)
    const { client } = c.session()
    const question: QuestionSpec = {
      text,
      title,
      blocks: parseBlocks(flagStrings(args, 'block')),
      files: flagStrings(args, 'file'),
      images: flagStrings(args, 'image'),
      choices: flagStrings(args, 'choice').map((raw) => ({
        options: splitOptions(raw),
        multi: args.flags.has('multi'),
      })),
      confirms: flagStrings(args, 'confirm'),
      texts: flagStrings(args, 'text'),
      numbers: flagStrings(args, 'number'),
      toggles: flagStrings(args, 'toggle'),
    }
    const verify = args.flags.has('verify')
    if (verify) {
      const ruled = await byRule(c, question)
      if (ruled !== undefined) return ruled
    }
    let sent: MessageBody | undefined
    const ledger = askLedger(c.env, c.profile)
    const askedAt = Date.now()
    const outcome = await askQuestion(client, question, {
      ...silentFlag(c),
      expiresIn: expiresMs === undefined ? undefined : expiresMs / 1000,
      timeoutMs:
        deadline === Number.POSITIVE_INFINITY ? undefined : Math.max(0, deadline - Date.now()),
      proof: verify,
      onAsked: (message, body) => {
        sent = body
        if (verify) ledger.note(message.id)
        io.note(`asked ${message.id}; waiting for the answer`)
      },
      onOutage: io.note,
    })
    if (verify && outcome.status === 'answered') {
      const { message } = await client.ask(outcome.id)
      const inputs = (sent?.blocks ?? []).filter(isInput)
      // From what this agent sent, never from the server's copy: an approval is signed as the
      // hooks' are (its decision, over the hash of its tool and input), any other question whole.
      const approval = inputs.find((b) => b.type === 'approval')
      const check = ledger.verify(message, {
        request_hash: approval
          ? requestHash(String(approval.tool), approval.input)
          : createHash('sha256').update(questionRequest(inputs)).digest('hex'),
        answer: outcome.answer,
        approval: approval !== undefined,
        asked_at: askedAt,
      })
      if (!check.ok) {
        await warnUnsigned(client, `the answer to "${text ?? title ?? outcome.id}"`, check.reason)
        throw new CliError(`the answer is not trusted: ${check.reason}`)
      }
    }
    return report(c, outcome)
  },
}

/**
 * `hark ask --verify` with one approval block and nothing else to answer: the person's signed
 * rules decide first, as in the hooks and the MCP `approve` tool (src/agent/policy.ts). A rule
 * that covers the action answers it here, with no question: one quiet line in the thread, a note
 * "allowed by rule …" on stderr, and the answer an approval would have had (`{"decision":
 * "allow"}`, or a deny with the person's message). Undefined: no rule covers it, ask as before.
 */
async function byRule(c: CommandContext, question: QuestionSpec): Promise<number | undefined> {
  const inputs = (question.blocks ?? []).filter(isInput)
  const others = [
    question.choices,
    question.confirms,
    question.texts,
    question.numbers,
    question.toggles,
  ].reduce((n, list) => n + (list?.length ?? 0), 0)
  const approval = inputs[0]
  if (inputs.length !== 1 || others > 0 || approval?.type !== 'approval') return undefined
  if (typeof approval.tool !== 'string') return undefined
  const action = {
    tool: approval.tool,
    input: approval.input,
    ...(typeof approval.cwd === 'string' ? { cwd: approval.cwd } : {}),
  }
  const decision = await decideByPolicy(
    c.session().client,
    c.env,
    c.profile,
    action,
    summaryOf(action),
    c.io.note,
  )
  if (!decision) return undefined
  const rule = decision.policy.claim.rule
  const answer: ApprovalAnswer =
    decision.effect === 'allow'
      ? { decision: 'allow' }
      : {
          decision: 'deny',
          message: rule.message?.trim() || `Denied by the person's rule: ${ruleText(rule)}.`,
        }
  c.io.note(`${decision.effect === 'allow' ? 'allowed' : 'denied'} by rule “${ruleText(rule)}”`)
  c.io.result(
    { id: null, status: 'answered', answer, policy: decision.policy.id },
    showValue(answer),
  )
  return EXIT.ok
}

export const wait: AgentCommand = {
  name: 'wait',
  summary: 'wait for the answer to a question',
  help: `Usage: hark wait ID [--timeout SECONDS]

Waits for the answer to question ID (asked with "hark ask" or "hark send --block ...").
Returns at once when it is already answered, expired or cancelled.

  --timeout SECONDS   stop waiting after this long (exit 124)

${ANSWER_HELP}`,
  valued: ['timeout'],
  async run(c) {
    const [id] = positionals(c, 1, 1, 'hark wait ID [--timeout SECONDS]')
    const timeoutMs = secondsFlag(c.args, 'timeout')
    const { client } = c.session()
    return report(c, await waitForAnswer(client, id as string, timeoutMs, c.io.note))
  },
}

export const cancel: AgentCommand = {
  name: 'cancel',
  summary: 'withdraw an open question',
  help: `Usage: hark cancel ID

Cancels an open question: the app stops offering it, and waiters get status "cancelled".
A question already answered, expired or cancelled gives an error (409, exit 1).`,
  async run(c) {
    const [id] = positionals(c, 1, 1, 'hark cancel ID')
    const answer = await c.session().client.cancel(id as string)
    c.io.result(answer, `cancelled ${answer.message.id}`)
    return 0
  },
}
