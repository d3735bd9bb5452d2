import type { AgentClient } from '../../agent/client.ts'
import { describeFailure } from '../../agent/failures.ts'
import {
  BadHookInput,
  claudeHook,
  DECIDED_IN_TERMINAL,
  type HookDeps,
  type HookEvent,
  type HookOutput,
} from '../../agent/harnesses/claude.ts'
import { codexDeny, codexHook } from '../../agent/harnesses/codex.ts'
import { preToolUse } from '../../agent/harnesses/defer.ts'
import { pendingApprovals } from '../../agent/harnesses/pending.ts'
import { withdraw } from '../../agent/person.ts'
import { decideByPolicy } from '../../agent/policy.ts'
import type { Env } from '../../agent/profiles.ts'
import { agentClientFor, openSession, profileName } from '../../agent/session.ts'
import { type AskLedger, askLedger } from '../../agent/trust.ts'
import type { Message } from '../../messages/schema.ts'
import { flagString, parseArgs } from '../args.ts'

/**
 * How long a hook waits for the person: under Claude Code's 600 s hook limit. The question
 * expires on the server at the same moment (src/agent/person.ts), so the card's
 * "Expires in 9 minutes" and the README's "No answer within 9 minutes" are this one number.
 */
export const DEFAULT_HOOK_WAIT_S = 540

export const HOOK_HELP = `Usage: hark hook claude [--wait SECONDS] [--reply] [--defer-after SECONDS] [--profile NAME]
       hark hook codex  [--wait SECONDS] [--profile NAME]

The command a coding agent's hooks run (written by "hark install claude" / "hark install codex"):
the hook event's JSON on stdin, the person's decision on stdout, as the agent's hook protocol
says. Claude Code: PermissionRequest (approvals, and its AskUserQuestion questions),
Elicitation, Notification, Stop, and PostToolUse, PostToolUseFailure and PermissionDenied (which
withdraw an approval decided in the terminal). Codex: PermissionRequest, and its notify program.

  --wait SECONDS  how long to wait for the person (env HARK_HOOK_WAIT; default ${DEFAULT_HOOK_WAIT_S}, under
                  Claude Code's 600 s hook limit); the question expires then
  --reply         Stop: ask the person for a reply and continue the session with it
  --defer-after SECONDS  PreToolUse, for headless runs (claude -p, CI): ask the person, and when
                  they have not answered within SECONDS, leave the card open and answer
                  "defer": the run stops cleanly (stop_reason "tool_deferred"); "hark resume
                  claude SESSION" resumes it once the person has answered
  --allow-unsigned  report an allow that the person's passkey did not sign (weaker: anyone who
                  can answer on the server could allow; env HARK_ALLOW_UNSIGNED=1). Without it,
                  an allow counts only with a valid signature by a key pinned at "hark init",
                  and so does the answer to a question (the Stop reply, AskUserQuestion, an
                  elicitation): one not signed is taken as no answer.

No answer in time, no server, bad input or a bad token: nothing is decided (Claude Code shows its
own prompt; Codex is told no), one line on stderr, the question withdrawn. Always exits 0:
in Claude Code's hook protocol exit 2 means "block".`

/** Most bytes read from stdin: a hook event with a large Write is big, but not this big. */
const MAX_STDIN_BYTES = 8 * 1024 * 1024
/** An agent writes its event at once and closes stdin; a hook never waits on a terminal. */
const STDIN_TIMEOUT_MS = 10_000
/** How long withdrawing a question may hold up the exit when the hook is terminated. */
const WITHDRAW_ON_EXIT_MS = 3000

const warn = (line: string) => process.stderr.write(`hark hook: ${line}\n`)

/** `hark hook …`: never throws, always resolves to 0. */
export async function runHook(argv: readonly string[], env: Env): Promise<number> {
  try {
    await hook(argv, env)
  } catch (error) {
    const message =
      error instanceof BadHookInput
        ? `bad hook input: ${error.message}`
        : describeFailure(error).message
    // One line: a stack trace is for us, not for the agent's log.
    const line = message.split('\n')[0] as string
    // Codex's notify program gets its event as a JSON argument; nothing reads its stdout.
    const notify = argv.some((a) => a.startsWith('{'))
    if (argv.includes('codex') && !notify) {
      // Codex hands an undecided action to its own model reviewer, never to the person: deny.
      warn(`${line}; denied`)
      process.stdout.write(
        `${JSON.stringify(codexDeny(`Not allowed: hark could not ask the person (${line}).`))}\n`,
      )
    } else {
      warn(`${line}; nothing decided`)
    }
  }
  return 0
}

/** `--allow-unsigned` or `HARK_ALLOW_UNSIGNED=1`: allows without a passkey's signature (weaker). */
export const allowsUnsigned = (flag: boolean, env: Env) =>
  flag || env.HARK_ALLOW_UNSIGNED === '1' || env.HARK_ALLOW_UNSIGNED === 'true'

/**
 * A signed answer's check against the keys pinned in `profile` (src/agent/trust.ts); the claim
 * it checks names whether the answer is an approval's, so one kind cannot stand in for the other.
 */
const ledgerCheck =
  (approval: boolean) =>
  (ledger: AskLedger): NonNullable<HookDeps['verifyAllow']> =>
  (question, answer, requestHash, askedAt) =>
    ledger.verify(question, { request_hash: requestHash, answer, approval, asked_at: askedAt })

/** An allow's signature. */
export const signatureCheck = ledgerCheck(true)

/** A signature on the answer to another question (not an approval). */
export const answerCheck = ledgerCheck(false)

function waitSeconds(flag: string | undefined, env: Env): number {
  const raw = flag ?? env.HARK_HOOK_WAIT
  if (raw === undefined || raw === '') return DEFAULT_HOOK_WAIT_S
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) throw new BadHookInput(`--wait must be seconds (got "${raw}")`)
  return n
}

async function hook(argv: readonly string[], env: Env): Promise<void> {
  const args = parseArgs(
    argv,
    ['wait', 'profile', 'defer-after'],
    ['reply', 'help', 'allow-unsigned'],
  )
  const [harness, ...extra] = args.positionals
  if (args.flags.has('help') || harness === undefined) {
    process.stderr.write(`${HOOK_HELP}\n`)
    return
  }
  if (harness !== 'claude' && harness !== 'codex') {
    throw new BadHookInput(`unknown harness "${harness}" (claude or codex)`)
  }
  const waitMs = waitSeconds(flagString(args, 'wait'), env) * 1000
  const profile = profileName(flagString(args, 'profile'), env)
  let client: AgentClient | undefined
  const connect = () => {
    // One retry only: with no server the agent must fall back to its own prompt quickly.
    client ??= (() => {
      const s = openSession(env, profile, warn)
      // Quietly: a hook's failure is one line on stderr, not a retry log.
      return agentClientFor(s.url, s.token, () => {}, 2)
    })()
    return client
  }
  // Codex's notify program gets its JSON as the last argument, not on stdin.
  const notifyArg = harness === 'codex' ? extra.at(-1) : undefined
  const event = parseEvent(notifyArg ?? (await readStdin()))
  const asked = withdrawOnExit(connect)
  const ledger = askLedger(env, profile)
  const deps: HookDeps = {
    client: connect,
    pending: (session) => pendingApprovals(env, session),
    waitMs,
    reply: args.flags.has('reply'),
    warn,
    onSending: asked.sending,
    onAsked: (message) => {
      asked.track(message)
      ledger.note(message.id)
    },
    // Policies are always signed (the app signs them with the passkey): no unsigned mode.
    policy: (action, summary) =>
      decideByPolicy(connect(), env, profile, action, summary, (line) => warn(line)),
    ...(allowsUnsigned(args.flags.has('allow-unsigned'), env)
      ? {}
      : { verifyAllow: signatureCheck(ledger), verifyAnswer: answerCheck(ledger) }),
  }
  const deferAfter = flagString(args, 'defer-after')
  const output: HookOutput | undefined =
    harness === 'codex'
      ? await codexHook(event, deps)
      : event.hook_event_name === 'PreToolUse'
        ? await preToolUse(deferredAction(event), {
            client: connect,
            env,
            profile,
            deferMs: deferAfter === undefined ? waitMs : waitSeconds(deferAfter, env) * 1000,
            warn,
            onAsked: deps.onAsked,
            verify: deps.verifyAllow !== undefined,
          })
        : await claudeHook(event, deps)
  asked.done()
  if (output !== undefined) process.stdout.write(`${JSON.stringify(output)}\n`)
}

/** PreToolUse's call, as the approval card shows it. */
function deferredAction(event: HookEvent) {
  const text = (key: string) => (typeof event[key] === 'string' ? (event[key] as string) : '')
  if (!text('tool_name') || !text('session_id')) {
    throw new BadHookInput('PreToolUse needs tool_name and session_id')
  }
  return {
    tool: text('tool_name'),
    input: event.tool_input ?? null,
    cwd: text('cwd') || undefined,
    session: text('session_id'),
    agent: 'Claude Code',
  }
}

function parseEvent(text: string): HookEvent {
  let event: unknown
  try {
    event = JSON.parse(text)
  } catch {
    throw new BadHookInput('stdin is not JSON')
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new BadHookInput('stdin is not a JSON object')
  }
  return event as HookEvent
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new BadHookInput('no event on stdin (it is a terminal)')
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = Bun.stdin.stream().getReader()
  const timer = setTimeout(() => reader.cancel().catch(() => {}), STDIN_TIMEOUT_MS)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > MAX_STDIN_BYTES) throw new BadHookInput(`stdin is over ${MAX_STDIN_BYTES} bytes`)
      chunks.push(value)
    }
  } finally {
    clearTimeout(timer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * When the agent ends the hook (the person answered in the terminal, or the agent gave up), the
 * question it asked is withdrawn before the process exits, so the phone never shows an action
 * already decided.
 */
function withdrawOnExit(connect: () => AgentClient) {
  let open: Message | undefined
  // Set while a question is on its way to the server: a signal then waits for its id.
  let sending: Promise<void> | undefined
  let sent: (() => void) | undefined
  const onSignal = async () => {
    const deadline = Bun.sleep(WITHDRAW_ON_EXIT_MS)
    if (!open && sending) await Promise.race([sending, deadline])
    const question = open
    if (question) {
      await Promise.race([withdraw(connect(), question.id, DECIDED_IN_TERMINAL), deadline])
    }
    process.exit(0)
  }
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onSignal)
  return {
    sending: () => {
      sending = new Promise((resolve) => {
        sent = resolve
      })
    },
    track: (message: Message) => {
      open = message
      sent?.()
    },
    done: () => {
      open = undefined
      sent?.()
      sending = undefined
    },
  }
}
