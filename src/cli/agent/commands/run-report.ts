import { type AgentClient, HarkError } from '../../../agent/client.ts'
import { describeFailure } from '../../../agent/failures.ts'
import { isNetworkError } from '../../../agent/retry.ts'
import type { Block, Message, MessageBody } from '../../../messages/schema.ts'
import {
  commandLine,
  count,
  formatDuration,
  lastLines,
  type OutputTail,
  readable,
  TAIL_LINES,
} from './run-output.ts'

/**
 * What `hark run` tells the person: a silent pinned status while the command runs, and a
 * message with the result (and, with --ask-on-fail, the question what to do) once it ended.
 */

/** How a run ended; `code` is what `hark run` exits with (as a shell reports it). */
export type Outcome =
  | { kind: 'exited'; code: number }
  | { kind: 'signal'; signal: string; code: number }
  | { kind: 'unstarted'; reason: string; code: number }

export interface RunInfo {
  command: readonly string[]
  title?: string
  attempt: number
}

/** The choice `--ask-on-fail` offers, in this order. */
export const DECISIONS = ['retry', 'skip', 'abort'] as const
export type Decision = (typeof DECISIONS)[number]

const MAX_TITLE = 200

/** The title of both messages: `--title`, or the command line. */
const titleOf = (info: RunInfo) =>
  (info.title ?? commandLine(info.command, MAX_TITLE)) || 'hark run'

/** `exited 0 after 3.2 s`, `exit code 2 after 1 min 03 s`, `killed by SIGTERM after 12 s`. */
export function outcomeText(outcome: Outcome, ms: number): string {
  const after = `after ${formatDuration(ms)}`
  switch (outcome.kind) {
    case 'exited':
      return outcome.code === 0 ? `exited 0 ${after}` : `exit code ${outcome.code} ${after}`
    case 'signal':
      return `killed by ${outcome.signal} ${after} (exit code ${outcome.code})`
    case 'unstarted':
      return `could not start: ${outcome.reason}`
  }
}

/** The pinned status: what runs, for how long, how much it printed. */
export function statusBody(info: RunInfo, elapsedMs: number, lines: number): MessageBody {
  const elapsed = elapsedMs < 1000 ? 'just started' : `${formatDuration(elapsedMs)} elapsed`
  const details = [elapsed, `${count(lines, 'line')} of output`]
  if (info.attempt > 1) details.push(`attempt ${info.attempt}`)
  const body: MessageBody = {
    text: `running: ${commandLine(info.command)}\n${details.join(' · ')}`,
  }
  if (info.title) body.title = info.title
  return body
}

/**
 * Keeps the status pinned under `key` and its elapsed time current: written at once, then every
 * `everyMs`, never two writes at a time (a slow server gets fewer, never a queue). A failure is
 * told once; the command goes on whatever the server does.
 */
export class StatusPin {
  private inFlight: Promise<void> | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  private warned = false
  /** True once a write was sent: the pin may exist, and is removed at the end. */
  written = false

  constructor(
    private readonly client: AgentClient,
    private readonly key: string,
    private readonly everyMs: number,
    private readonly body: () => MessageBody,
    private readonly warn: (line: string) => void,
  ) {}

  start(): void {
    this.write()
    this.timer = setInterval(() => this.write(), this.everyMs)
  }

  /** Stops the updates; resolves once a write under way has ended (so none lands after). */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.inFlight
  }

  private write(): void {
    if (this.inFlight) return
    this.written = true
    this.inFlight = this.client
      .pin(this.key, { body: this.body(), silent: true })
      .then(
        () => {},
        (error) => {
          if (this.warned) return
          this.warned = true
          this.warn(
            `cannot update the status pin "${this.key}": ${describeFailure(error).message} (the command goes on)`,
          )
        },
      )
      .finally(() => {
        this.inFlight = undefined
      })
  }
}

export interface Ran {
  outcome: Outcome
  ms: number
  tail: OutputTail
}

/**
 * Sends the result: title, how it ended, the last lines as a code block, and when the output was
 * longer, the whole kept tail as output.txt. With `ask`, the same message asks retry, skip or
 * abort. A failed upload (a full channel) leaves the file out; a network failure is thrown.
 */
export async function sendResult(
  client: AgentClient,
  info: RunInfo,
  ran: Ran,
  ask: boolean,
  warn: (line: string) => void,
): Promise<Message> {
  const { outcome, ms, tail } = ran
  const mark = outcome.code === 0 ? '✓' : '✗'
  const lines = [`${mark} ${outcomeText(outcome, ms)}`]
  if (info.title) lines.push(`$ ${commandLine(info.command)}`)
  if (info.attempt > 1) lines.push(`attempt ${info.attempt}`)
  const text = readable(tail.text())
  const long = tail.lines > TAIL_LINES || tail.truncated
  if (tail.bytes === 0) lines.push('no output')
  else if (long) {
    const kept = tail.truncated ? 'the last 64 KiB' : 'all of it'
    lines.push(
      `${count(tail.lines, 'line')} of output: the last ${TAIL_LINES} below, ${kept} in output.txt`,
    )
  } else lines.push(`${count(tail.lines, 'line')} of output`)

  const blocks: Block[] = []
  if (tail.bytes > 0) blocks.push({ type: 'code', code: lastLines(text) })
  if (long) {
    try {
      const file = await client.upload('output.txt', new Blob([text]), 'text/plain')
      blocks.push({
        type: 'file',
        file_id: file.file_id,
        name: file.name,
        mime: file.mime,
        size: file.size,
      })
    } catch (error) {
      if (isNetworkError(error)) throw error
      warn(
        `cannot upload output.txt: ${describeFailure(error).message} (sending the result without it)`,
      )
    }
  }
  if (ask) {
    lines.push(`Retry, skip (hark run exits 0) or abort (it exits ${outcome.code})?`)
    blocks.push({
      type: 'choice',
      id: 'choice',
      options: DECISIONS.map((label) => ({ label })),
    })
  }
  const body: MessageBody = { title: titleOf(info), text: lines.join('\n') }
  if (blocks.length > 0) body.blocks = blocks
  const { message } = await client.send({ body })
  return message
}

/** Removes the status pin; one already gone is fine. */
export async function removeStatus(
  client: AgentClient,
  key: string,
  warn: (line: string) => void,
): Promise<void> {
  try {
    await client.unpin(key)
  } catch (error) {
    if (error instanceof HarkError && error.status === 404) return
    warn(`cannot remove the status pin "${key}": ${describeFailure(error).message}`)
  }
}
