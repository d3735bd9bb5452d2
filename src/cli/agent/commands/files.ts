import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { uploadPath } from '../../../agent/bodies.ts'
import { fileError, isLocalFileError } from '../../../agent/failures.ts'
import { flagString } from '../../args.ts'
import { type AgentCommand, positionals } from '../command.ts'

export const upload: AgentCommand = {
  name: 'upload',
  summary: 'upload a file; prints its id for image and file blocks',
  help: `Usage: hark upload PATH [--name NAME] [--mime TYPE]

Uploads a file to this agent's channel and prints its file id, to use in an image or file
block ("hark send --file PATH" does both in one step). With --json: {file_id,name,mime,size}.

  --name NAME    the name the person sees (default: the file's own name)
  --mime TYPE    the content type (default: guessed from the name)`,
  valued: ['name', 'mime'],
  async run(c) {
    const [path] = positionals(c, 1, 1, 'hark upload PATH')
    const info = await uploadPath(c.session().client, path as string, {
      name: flagString(c.args, 'name'),
      mime: flagString(c.args, 'mime'),
    })
    c.io.result(info, info.file_id)
    return 0
  },
}

/** The file name a download offers (`filename*` first), made safe to write in a directory. */
export function offeredName(disposition: string | null, fallback: string): string {
  let name: string | undefined
  const extended = disposition && /filename\*=UTF-8''([^;]+)/i.exec(disposition)
  if (extended) {
    try {
      name = decodeURIComponent(extended[1] as string)
    } catch {}
  }
  name ??= (disposition && /filename="([^"]*)"/i.exec(disposition)?.[1]) || undefined
  const safe = basename((name ?? '').replace(/\\/g, '/'))
  return safe === '' || safe === '.' || safe === '..' ? fallback : safe
}

export const download: AgentCommand = {
  name: 'download',
  summary: 'download a file of this channel',
  help: `Usage: hark download FILE_ID [PATH]

Downloads a file of this channel (one the person sent, or one uploaded). PATH is where to
write it: a file, a directory (the file keeps its name), or "-" for stdout; without PATH, the
file's own name in the current directory. Prints the path written.
With --json: {file_id,path,size,mime}.`,
  async run(c) {
    const [fileId, target] = positionals(c, 1, 2, 'hark download FILE_ID [PATH]')
    if (target === '-') {
      const response = await c.session().client.download(fileId as string)
      await Bun.write(Bun.stdout, response)
      return 0
    }
    const into = target !== undefined && existsSync(target) && statSync(target).isDirectory()
    const dir = resolve(target === undefined ? '.' : into ? target : dirname(target))
    // Where it cannot write is found out before the request (nothing is fetched, and the fs
    // error is not mistaken for a network one); the file lands whole, by a rename, or not at all.
    const temporary = join(dir, `.hark-download-${randomBytes(6).toString('hex')}`)
    try {
      mkdirSync(dir, { recursive: true })
      closeSync(openSync(temporary, 'wx'))
    } catch (error) {
      throw target === undefined || into
        ? fileError('write in', dir, error)
        : fileError('write', target, error)
    }
    try {
      const response = await c.session().client.download(fileId as string)
      const mime = response.headers.get('content-type') ?? 'application/octet-stream'
      const name = offeredName(response.headers.get('content-disposition'), fileId as string)
      const path = target === undefined ? name : into ? join(target, name) : target
      try {
        const size = await Bun.write(temporary, response)
        renameSync(temporary, path)
        c.io.result({ file_id: fileId, path, size, mime }, path)
        return 0
      } catch (error) {
        // A body cut off in transit is the network's; a full disk is this machine's.
        throw isLocalFileError(error) ? fileError('write', path, error) : error
      }
    } finally {
      rmSync(temporary, { force: true })
    }
  },
}
