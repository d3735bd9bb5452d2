import { constants } from 'node:os'
import { basename } from 'node:path'
import type { Subprocess } from 'bun'
import { describeFailure } from '../../../agent/failures.ts'
import { waitForAnswer } from '../../../agent/questions.ts'
import { isNetworkError } from '../../../agent/retry.ts'
import { agentClientFor } from '../../../agent/session.ts'
import { UsageError } from '../../../core/errors.ts'
import { LIMITS } from '../../../messages/limits.ts'
import { flagString } from '../../args.ts'
import type { AgentCommand, CommandContext } from '../command.ts'
import { commandLine, OutputTail } from './run-output.ts'
import {
  DECISIONS,
  type Decision,
  type Outcome,
  outcomeText,
  type Ran,
  type RunInfo,
  removeStatus,
  StatusPin,
  sendResult,
  statusBody,
} from './run-report.ts'

const USAGE = 'hark run [--title TITLE] [--ask-on-fail] [--pin KEY] -- COMMAND [ARG...]'

/** The status's elapsed time is rewritten this often: 6 writes a minute of the channel's 120. */
const DEFAULT_INTERVAL_S = 10
/** After the command exits, how long its output may still come (a child left running holds it). */
const DRAIN_MS = 2000
/** Exit code when the command cannot be started, as a shell's "command not found". */
const UNSTARTED = 127
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
const PIN_KEY = /^[A-Za-z0-9._:-]+$/

/** `run:` and the title or the command's name, reduced to what a pin key may hold. */
export function defaultPinKey(title: string | undefined, command: readonly string[]): string {
  const from = title ?? basename(command[0] ?? '')
  const slug = from
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, LIMITS.pinKeyChars - 'run:'.length)
    .replace(/-+$/, '')
  return slug ? `run:${slug}` : 'run'
}

function intervalMs(env: Record<string, string | undefined>): number {
  const raw = env.HARK_RUN_INTERVAL
  if (raw === undefined || raw === '') return DEFAULT_INTERVAL_S * 1000
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 1 || n > 3600) {
    throw new UsageError(`HARK_RUN_INTERVAL must be 1 to 3600 seconds (got "${raw}")`)
  }
  return n * 1000
}

/** The signal's number, for 128 + it; 0 for a name this platform does not know. */
function signalNumber(name: string): number {
  return (constants.signals as Record<string, number>)[name] ?? 0
}

function unstarted(command: string, error: unknown): Outcome {
  const code = (error as NodeJS.ErrnoException).code
  const reason =
    code === 'ENOENT'
      ? `${command}: command not found`
      : code === 'EACCES'
        ? `${command}: permission denied`
        : `${command}: ${(error as Error).message}`
  return { kind: 'unstarted', reason, code: UNSTARTED }
}

/**
 * Copies a stream to `sink` as it comes (waiting for the sink, so a slow terminal slows the
 * command rather than filling memory) and into the tail. A sink that broke (a closed pipe)
 * stops being written; the output is still kept.
 */
async function pump(
  stream: ReadableStream<Uint8Array>,
  sink: NodeJS.WriteStream,
  tail: OutputTail,
): Promise<void> {
  watch(sink)
  try {
    for await (const chunk of stream) {
      tail.add(chunk)
      if (broken.has(sink)) continue
      await new Promise<void>((resolve) => {
        try {
          sink.write(chunk, (error) => {
            if (error) broken.add(sink)
            resolve()
          })
        } catch {
          broken.add(sink)
          resolve()
        }
      })
    }
  } catch {
    // The pipe failed: what came is kept.
  }
}

/** hark's stdout or stderr once writing to it failed (EPIPE): the output is only kept. */
const broken = new Set<NodeJS.WriteStream>()
const watched = new Set<NodeJS.WriteStream>()
function watch(sink: NodeJS.WriteStream): void {
  if (watched.has(sink)) return
  watched.add(sink)
  sink.on('error', () => broken.add(sink))
}

interface Runner {
  c: CommandContext
  info: Omit<RunInfo, 'attempt'>
  key: string
  everyMs: number
  statusClient: ReturnType<typeof agentClientFor>
  /** What a signal to hark does now. */
  onSignal: (signal: NodeJS.Signals) => void
}

/** One run of the command, its status pinned while it runs. */
async function runOnce(
  r: Runner,
  info: RunInfo,
): Promise<Ran & { status: StatusPin; interrupted: boolean }> {
  const tail = new OutputTail()
  const started = Date.now()
  const status = new StatusPin(
    r.statusClient,
    r.key,
    r.everyMs,
    () => statusBody(info, Date.now() - started, tail.lines),
    r.c.io.note,
  )
  let proc: Subprocess<'inherit', 'pipe', 'pipe'>
  try {
    proc = Bun.spawn([...info.command], {
      stdin: 'inherit',
      stdout: 'pipe',
      stderr: 'pipe',
      env: process.env,
    })
  } catch (error) {
    const outcome = unstarted(info.command[0] ?? '', error)
    return { outcome, ms: Date.now() - started, tail, status, interrupted: false }
  }
  let interrupted = false
  r.onSignal = (signal) => {
    interrupted = true
    try {
      proc.kill(signal)
    } catch {}
  }
  status.start()
  // With --json, stdout is hark's one JSON document: the command's output goes to stderr.
  const out = r.c.io.json ? process.stderr : process.stdout
  const pumps = Promise.all([pump(proc.stdout, out, tail), pump(proc.stderr, process.stderr, tail)])
  await proc.exited
  const ms = Date.now() - started
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([pumps, new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))])
  clearTimeout(timer)
  await status.stop()
  const signal = proc.signalCode
  const outcome: Outcome =
    proc.exitCode !== null
      ? { kind: 'exited', code: proc.exitCode }
      : { kind: 'signal', signal: String(signal), code: 128 + signalNumber(String(signal)) }
  return { outcome, ms, tail, status, interrupted }
}

export const run: AgentCommand = {
  name: 'run',
  summary: 'run a command with a pinned status, and send its result',
  help: `Usage: ${USAGE}

Runs COMMAND, keeping a silent pinned status ("running: COMMAND", the elapsed time, the lines
printed) that is updated every 10 s, and on exit removes it and sends the result: the title,
the exit code or signal, the duration and the last 60 lines of output as a code block (when
there were more, the last 64 KiB of output also as output.txt). Exits with COMMAND's code
(128 + the signal when one killed it; 127 when it cannot be started).

COMMAND's stdin is hark's own; its stdout and stderr pass through as they come (with --json,
its stdout goes to stderr, and stdout holds {"exit_code","signal","duration_ms","lines",
"message_id","attempts"}). Ctrl-C, SIGTERM and SIGHUP are passed to COMMAND, and the result is
still sent. When the server cannot be reached the command runs all the same and its exit code
is kept: what hark could not do is said on stderr.

  --title TITLE    the title of the status and the result (default: the command line)
  --ask-on-fail    when COMMAND fails, ask the person: retry (run it again), skip (exit 0)
                   or abort (exit with COMMAND's code)
  --pin KEY        the status's pin key (default "run:" and the title or command's name)

With --ask-on-fail the result message is the question; hark waits for the answer without a
limit (Ctrl-C withdraws it and exits with COMMAND's code). A run the person retries gets a
fresh status and a result of its own. A command stopped by a signal to hark is not asked about.

  HARK_RUN_INTERVAL  seconds between updates of the elapsed time (default 10)`,
  valued: ['title', 'pin'],
  booleans: ['ask-on-fail'],
  async run(c) {
    const command = c.args.positionals
    if (command.length === 0 || command[0] === '') {
      throw new UsageError(`missing the command to run\nUsage: ${USAGE}`)
    }
    const title = flagString(c.args, 'title')
    if (title !== undefined && title.length > LIMITS.titleChars) {
      throw new UsageError(`--title is longer than ${LIMITS.titleChars} characters`)
    }
    const key = flagString(c.args, 'pin') ?? defaultPinKey(title || undefined, command)
    if (key.length > LIMITS.pinKeyChars || !PIN_KEY.test(key)) {
      throw new UsageError(
        `--pin must be 1 to ${LIMITS.pinKeyChars} letters, digits or . _ - : (got "${key}")`,
      )
    }
    const askOnFail = c.args.flags.has('ask-on-fail')
    const everyMs = intervalMs(c.env)
    // Not connected at all is this machine's setup, found before anything runs (exit 4).
    const session = c.session()
    // The status is best effort: one attempt per update, told once on stderr when it fails.
    const statusClient = agentClientFor(session.url, session.token, () => {}, 1)
    const r: Runner = {
      c,
      info: { command, title: title || undefined },
      key,
      everyMs,
      statusClient,
      // Before the command starts: hark is stopped as any command is, and nothing runs.
      onSignal: (signal) => process.exit(128 + signalNumber(signal)),
    }
    const listener = (signal: NodeJS.Signals) => r.onSignal(signal)
    // hark's own Ctrl-C handler (exit 130 at once) would leave the command running unreported.
    const saved = process.listeners('SIGINT')
    process.removeAllListeners('SIGINT')
    for (const s of FORWARDED) process.on(s, listener)
    try {
      return await runAttempts(r, askOnFail)
    } finally {
      for (const s of FORWARDED) process.off(s, listener)
      for (const l of saved) process.on('SIGINT', l)
    }
  },
}

async function runAttempts(r: Runner, askOnFail: boolean): Promise<number> {
  const { io } = r.c
  const { client } = r.c.session()
  for (let attempt = 1; ; attempt++) {
    const info: RunInfo = { ...r.info, attempt }
    const ran = await runOnce(r, info)
    const { outcome } = ran
    // The command is over: a signal now stops the reporting, and its exit code stays.
    r.onSignal = () => process.exit(outcome.code)
    const asking = askOnFail && outcome.code !== 0 && !ran.interrupted
    let messageId: string | undefined
    let reachable = true
    try {
      messageId = (await sendResult(client, info, ran, asking, io.note)).id
    } catch (error) {
      reachable = !isNetworkError(error)
      io.note(`cannot send the result: ${describeFailure(error).message}`)
    }
    if (ran.status.written && reachable) await removeStatus(client, r.key, io.note)
    const name = commandLine(info.command, 60)
    const ended = outcomeText(outcome, ran.ms)
    const reported = messageId ? ` (reported: ${messageId})` : ''
    io.note(`${outcome.kind === 'unstarted' ? ended : `${name}: ${ended}`}${reported}`)
    const finish = (code: number, decision?: Decision) => {
      if (io.json) {
        io.result({
          exit_code: code,
          signal: outcome.kind === 'signal' ? outcome.signal : null,
          duration_ms: ran.ms,
          lines: ran.tail.lines,
          message_id: messageId ?? null,
          attempts: attempt,
          ...(decision ? { decision } : {}),
        })
      }
      return code
    }
    if (!asking) return finish(outcome.code)
    if (messageId === undefined) {
      io.note("cannot ask what to do: exiting with the command's code")
      return finish(outcome.code)
    }
    const decision = await decide(r, messageId, outcome.code)
    io.note(`the person chose ${decision}`)
    if (decision === 'retry') continue
    return finish(decision === 'skip' ? 0 : outcome.code, decision)
  }
}

/** The person's answer to retry / skip / abort; anything but an answer is abort. */
async function decide(r: Runner, id: string, code: number): Promise<Decision> {
  const { io } = r.c
  const { client } = r.c.session()
  io.note(`asked the person: retry, skip or abort (${id})`)
  // Ctrl-C while waiting: withdraw the question (briefly), exit as abort would.
  r.onSignal = () => {
    setTimeout(() => process.exit(code), 3000).unref()
    client.cancel(id).finally(() => process.exit(code))
  }
  try {
    const outcome = await waitForAnswer(client, id, undefined, io.note)
    if (outcome.status !== 'answered') {
      io.note(`the question was ${outcome.status}: abort`)
      return 'abort'
    }
    const answer = Array.isArray(outcome.answer) ? outcome.answer[0] : outcome.answer
    return (DECISIONS as readonly unknown[]).includes(answer) ? (answer as Decision) : 'abort'
  } catch (error) {
    io.note(`cannot wait for the answer: ${describeFailure(error).message}: abort`)
    return 'abort'
  }
}
