import { type BodySpec, checkReadable, parseBlocks, parseJson } from '../../../agent/bodies.ts'
import { fileError } from '../../../agent/failures.ts'
import { sendMessage } from '../../../agent/messages.ts'
import { UsageError } from '../../../core/errors.ts'
import type { EditRequest } from '../../../messages/schema.ts'
import { flagString, flagStrings } from '../../args.ts'
import { type AgentCommand, type CommandContext, messageText, positionals } from '../command.ts'

/** The body flags `send` and `pin` share. */
export const BODY_VALUED = ['title', 'markdown', 'block', 'file', 'image'] as const
export const BODY_HELP = `  --title TITLE        a title above the text
  --markdown FILE      a markdown block from FILE ("-" for stdin)
  --block JSON         a block, or an array of blocks, as JSON (repeatable)
  --file PATH          upload PATH and attach it (repeatable)
  --image PATH         upload PATH and show it as an image (repeatable)`

/** What a message holds, from TEXT... (or stdin) and the body flags. */
export async function bodySpecFromFlags(c: CommandContext, words: string[]): Promise<BodySpec> {
  const { args } = c
  const markdownPath = flagString(args, 'markdown')
  const blocks = parseBlocks(flagStrings(args, 'block'))
  const files = flagStrings(args, 'file')
  const images = flagStrings(args, 'image')
  const title = flagString(args, 'title')
  const otherContent =
    title !== undefined ||
    markdownPath !== undefined ||
    blocks.length + files.length + images.length > 0
  const text = await messageText(c, words, otherContent)
  const markdown =
    markdownPath === undefined
      ? undefined
      : markdownPath === '-'
        ? await c.io.readStdin()
        : await readTextFile(markdownPath)
  return { text, title, markdown, blocks, files, images }
}

/** `--silent`; without it the server decides (it notifies). */
export const silentFlag = (c: CommandContext) => ({
  silent: c.args.flags.has('silent') ? true : undefined,
})

/** A file's text, or an error naming the file and why it cannot be read (exit 1). */
async function readTextFile(path: string): Promise<string> {
  checkReadable([path])
  try {
    return await Bun.file(path).text()
  } catch (error) {
    throw fileError('read', path, error)
  }
}

export const send: AgentCommand = {
  name: 'send',
  summary: 'send the person a message',
  help: `Usage: hark send [TEXT...] [flags]

Sends a message and prints its id. The text is the arguments, or stdin: with "-"
("make 2>&1 | tail -20 | hark send - --title Log"), or when nothing else is given (no text,
title, block or file) and stdin is a pipe or a file. Otherwise stdin is never read.

${BODY_HELP}
  --silent             no push notification`,
  valued: BODY_VALUED,
  booleans: ['silent'],
  async run(c) {
    const spec = await bodySpecFromFlags(c, c.args.positionals)
    const answer = await sendMessage(c.session().client, spec, silentFlag(c))
    c.io.result(answer, answer.message.id)
    return 0
  },
}

/** `--block-patch` values: `{ "id": "p", ... }`, an array of those, or `{ "p": { ... } }`. */
export function parseBlockPatches(values: string[]) {
  const patches: ({ id: string } & Record<string, unknown>)[] = []
  for (const raw of values) {
    const parsed = parseJson(raw, '--block-patch')
    const list = Array.isArray(parsed) ? parsed : [parsed]
    for (const p of list) {
      if (typeof p !== 'object' || p === null) {
        throw new UsageError('--block-patch must be a JSON object')
      }
      const entry = p as Record<string, unknown>
      if (typeof entry.id === 'string') {
        patches.push(entry as { id: string })
        continue
      }
      // The map form: every value is the patch of the block named by its key.
      for (const [id, fields] of Object.entries(entry)) {
        if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
          throw new UsageError(
            '--block-patch must be {"id": ..., fields} or {"BLOCK_ID": {fields}}',
          )
        }
        patches.push({ ...(fields as Record<string, unknown>), id })
      }
    }
  }
  return patches
}

export const edit: AgentCommand = {
  name: 'edit',
  summary: 'edit a message in place',
  help: `Usage: hark edit ID [--title T] [--text T] [--block-patch JSON]... [--block JSON]...

Edits one of this agent's messages in place (the person sees the update).

  --title TITLE        the new title ("" removes it)
  --text TEXT          the new text ("" removes it)
  --block-patch JSON   fields merged into the block with that id: {"id":"bar","value":7}
                       (repeatable; an array, or {"bar":{"value":7}}, also work)
  --block JSON         replace all blocks with these (repeatable)`,
  valued: ['title', 'text', 'block-patch', 'block'],
  async run(c) {
    const [id] = positionals(c, 1, 1, 'hark edit ID [flags]')
    const req: EditRequest = {}
    const title = flagString(c.args, 'title')
    const text = flagString(c.args, 'text')
    if (title !== undefined) req.title = title === '' ? null : title
    if (text !== undefined) req.text = text === '' ? null : text
    const blocks = flagStrings(c.args, 'block')
    if (blocks.length > 0) req.blocks = parseBlocks(blocks)
    const patches = parseBlockPatches(flagStrings(c.args, 'block-patch'))
    if (patches.length > 0) req.block_patches = patches
    if (Object.keys(req).length === 0) {
      throw new UsageError('nothing to change: give --title, --text, --block-patch or --block')
    }
    const answer = await c.session().client.edit(id as string, req)
    c.io.result(answer, `edited ${answer.message.id}`)
    return 0
  },
}

export const rm: AgentCommand = {
  name: 'rm',
  summary: 'delete a message',
  help: `Usage: hark rm ID

Deletes one of this agent's messages (the person's messages cannot be deleted).`,
  async run(c) {
    const [id] = positionals(c, 1, 1, 'hark rm ID')
    const answer = await c.session().client.remove(id as string)
    c.io.result(answer, `deleted ${id}`)
    return 0
  },
}
