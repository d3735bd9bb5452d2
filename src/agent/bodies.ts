import { closeSync, openSync, type Stats, statSync } from 'node:fs'
import { basename } from 'node:path'
import { UsageError } from '../core/errors.ts'
import type { FileInfo } from '../files/schema.ts'
import type { Block, MessageBody } from '../messages/schema.ts'
import { isInput } from '../shared/blocks.ts'
import type { AgentClient } from './client.ts'
import { CliError, fileError } from './failures.ts'

/**
 * Message bodies from the pieces the CLI's flags and the MCP tools' arguments both offer: text,
 * a title, markdown, raw blocks, attachments, and simple question inputs.
 */
export interface BodySpec {
  text?: string
  title?: string
  markdown?: string
  blocks?: Block[]
  /** Paths uploaded and attached as `file` blocks. */
  files?: string[]
  /** Paths uploaded and shown as `image` blocks. */
  images?: string[]
}

export interface QuestionSpec extends BodySpec {
  /** One `choice` block per entry. */
  choices?: { options: string[]; multi?: boolean }[]
  confirms?: string[]
  texts?: string[]
  numbers?: string[]
  toggles?: string[]
}

/**
 * Checks that each file can be read, before anything is sent: one that cannot would fail
 * mid-way, after the files before it were uploaded, with an fs error that has a `.code` and so
 * passed for a network failure. Says which file, and why.
 */
export function checkReadable(paths: readonly string[]): void {
  for (const path of paths) {
    let stat: Stats
    try {
      stat = statSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new CliError(`no such file: ${path}`)
      }
      throw fileError('read', path, error)
    }
    if (stat.isDirectory()) throw new CliError(`cannot read ${path}: it is a directory`)
    // Opening a pipe (`--file <(cmd)`) would take its data or wait for a writer: only regular
    // files are opened to check them.
    if (!stat.isFile()) continue
    try {
      closeSync(openSync(path, 'r'))
    } catch (error) {
      throw fileError('read', path, error)
    }
  }
}

/** Uploads a file from disk: the name is its base name, the type what Bun guesses. */
export async function uploadPath(
  client: AgentClient,
  path: string,
  options: { name?: string; mime?: string } = {},
): Promise<FileInfo> {
  checkReadable([path])
  const file = Bun.file(path)
  const mime = options.mime ?? (file.type || 'application/octet-stream')
  return client.upload(options.name ?? basename(path), file, mime)
}

/** The body, with attachments uploaded first. Empty bodies are a usage error. */
export async function composeBody(client: AgentClient, spec: BodySpec): Promise<MessageBody> {
  checkReadable([...(spec.images ?? []), ...(spec.files ?? [])])
  const blocks: Block[] = []
  if (spec.markdown !== undefined) blocks.push({ type: 'markdown', text: spec.markdown })
  blocks.push(...(spec.blocks ?? []))
  for (const path of spec.images ?? []) {
    const f = await uploadPath(client, path)
    blocks.push({ type: 'image', file_id: f.file_id, name: f.name })
  }
  for (const path of spec.files ?? []) {
    const f = await uploadPath(client, path)
    blocks.push({ type: 'file', file_id: f.file_id, name: f.name, mime: f.mime, size: f.size })
  }
  const body: MessageBody = {}
  if (spec.title !== undefined && spec.title !== '') body.title = spec.title
  if (spec.text !== undefined && spec.text !== '') body.text = spec.text
  if (blocks.length > 0) body.blocks = blocks
  if (Object.keys(body).length === 0) {
    throw new UsageError('nothing to send: give a text, --title, --markdown, --block or a file')
  }
  return body
}

/** Input blocks from the simple question flags; ids name their kind (`choice`, `text_2`). */
export function inputBlocks(spec: QuestionSpec): Block[] {
  const blocks: Block[] = []
  const used = new Set((spec.blocks ?? []).map((b) => b.id))
  const idFor = (kind: string) => {
    let id = kind
    for (let n = 2; used.has(id); n++) id = `${kind}_${n}`
    used.add(id)
    return id
  }
  for (const c of spec.choices ?? []) {
    const options = c.options.map((label) => ({ label }))
    if (options.length === 0) throw new UsageError('a choice needs at least one option')
    blocks.push({
      type: 'choice',
      id: idFor('choice'),
      options,
      ...(c.multi ? { multi: true } : {}),
    })
  }
  for (const label of spec.confirms ?? []) {
    blocks.push({ type: 'confirm', id: idFor('confirm'), label })
  }
  for (const label of spec.texts ?? []) {
    blocks.push({ type: 'text_input', id: idFor('text'), label })
  }
  for (const label of spec.numbers ?? []) {
    blocks.push({ type: 'number_input', id: idFor('number'), label })
  }
  for (const label of spec.toggles ?? []) {
    blocks.push({ type: 'toggle', id: idFor('toggle'), label })
  }
  return blocks
}

/** A question's body: the message pieces plus its inputs; at least one input is required. */
export async function composeQuestion(
  client: AgentClient,
  spec: QuestionSpec,
): Promise<MessageBody> {
  const inputs = inputBlocks(spec)
  const raw = spec.blocks ?? []
  if (inputs.length === 0 && !raw.some(isInput)) {
    throw new UsageError(
      'a question needs an input: --choice, --confirm, --text, --number, --toggle or an input --block',
    )
  }
  return composeBody(client, { ...spec, blocks: [...raw, ...inputs] })
}

/** `yes,no` → `['yes', 'no']`; blanks dropped. */
export const splitOptions = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')

/** `--block` values: each a JSON object, or an array of them. */
export function parseBlocks(values: string[], flag = '--block'): Block[] {
  return values.flatMap((raw) => {
    const parsed = parseJson(raw, flag)
    const list = Array.isArray(parsed) ? parsed : [parsed]
    for (const b of list) {
      if (typeof b !== 'object' || b === null || typeof (b as Block).type !== 'string') {
        throw new UsageError(`${flag} must be a JSON object with a "type" (or an array of them)`)
      }
    }
    return list as Block[]
  })
}

export function parseJson(raw: string, flag: string): unknown {
  try {
    return JSON.parse(raw)
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`)
  }
}

/** A number from a flag or argument, or a usage error naming it. */
export function parseNumber(raw: string, what: string): number {
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n)) {
    throw new UsageError(`${what} must be a number (got "${raw}")`)
  }
  return n
}

/** A progress bar: numbers, or their text from the command line. */
export interface ProgressSpec {
  value: number | string
  max?: number | string
  label?: string
  title?: string
}

const asNumber = (v: number | string, what: string) =>
  typeof v === 'number' ? v : parseNumber(v, what)

/** The body of a progress pin: one `progress` block (id `progress`), maybe a title. */
export function progressBody(spec: ProgressSpec): MessageBody {
  const block: Block = { type: 'progress', id: 'progress', value: asNumber(spec.value, 'VALUE') }
  if (spec.max !== undefined) {
    const max = asNumber(spec.max, '--max')
    if (max <= 0) throw new UsageError(`--max must be positive (got ${max})`)
    block.max = max
  }
  if (spec.label !== undefined) block.label = spec.label
  return spec.title ? { title: spec.title, blocks: [block] } : { blocks: [block] }
}
