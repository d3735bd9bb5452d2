import { commandOf, stringField } from '../../../../src/shared/approval-text.ts'
import { DiffView } from './diff-view.tsx'
import { CodeText, Fields, FilePath, isRecord } from './parts.tsx'
import { Plain } from './plain.tsx'

/**
 * What an approved tool call will do, by tool: a command to run, a diff to apply, a file to
 * write, a page to fetch. Claude Code's tools have their own views; any other tool (MCP tools,
 * Codex's) shows its input as key/values. A view shows the fields it knows and then, as
 * key/values, every other field the input carries: nothing the agent sent stays hidden.
 * An input whose fields are not what the view expects is shown as key/values too.
 */
export function ToolView({ tool, input }: { tool: string; input: unknown }) {
  const command = commandOf(tool, input)
  if (command !== undefined) return <ShellView command={command} input={input} />
  switch (tool) {
    case 'Edit':
      if (isEdit(input)) return <EditView input={input} />
      break
    case 'MultiEdit':
      if (isMultiEdit(input)) return <MultiEditView input={input} />
      break
    case 'Write':
      if (isWrite(input)) return <WriteView input={input} />
      break
    case 'WebFetch':
      if (stringField(input, 'url') !== undefined) return <WebFetchView input={input} />
      break
  }
  const empty =
    input === null || input === undefined || (isRecord(input) && !Object.keys(input).length)
  return empty ? <p class="ap-desc">No input.</p> : <Fields input={input} />
}

interface EditFields {
  old_string: string
  new_string: string
  replace_all?: unknown
}
type EditInput = EditFields & { file_path: string }
type MultiEditInput = { file_path: string; edits: EditFields[] }
type WriteInput = { file_path: string; content: string }

const isEditFields = (v: unknown): v is EditFields =>
  isRecord(v) && typeof v.old_string === 'string' && typeof v.new_string === 'string'

const isEdit = (v: unknown): v is EditInput =>
  isEditFields(v) && typeof (v as { file_path?: unknown }).file_path === 'string'

const isWrite = (v: unknown): v is WriteInput =>
  stringField(v, 'file_path') !== undefined && stringField(v, 'content') !== undefined

const isMultiEdit = (v: unknown): v is MultiEditInput =>
  isRecord(v) &&
  typeof v.file_path === 'string' &&
  Array.isArray(v.edits) &&
  v.edits.length > 0 &&
  v.edits.every(isEditFields)

/** Bash, Codex's shell: what it says it does, then the command itself. */
function ShellView({ command, input }: { command: string; input: unknown }) {
  const description = stringField(input, 'description')
  return (
    <>
      {description && (
        <p class="ap-desc">
          <Plain text={description} />
        </p>
      )}
      <CodeText text={command} class="ap-shell" />
      <Fields input={input} omit={['command', 'cmd', 'description']} />
    </>
  )
}

const everyOccurrence = 'every occurrence'

function EditView({ input }: { input: EditInput }) {
  return (
    <>
      <FilePath path={input.file_path} note={input.replace_all === true && everyOccurrence} />
      <DiffView before={input.old_string} after={input.new_string} />
      <Fields input={input} omit={['file_path', 'old_string', 'new_string', 'replace_all']} />
    </>
  )
}

function MultiEditView({ input }: { input: MultiEditInput }) {
  const n = input.edits.length
  return (
    <>
      <FilePath path={input.file_path} note={`${n} ${n === 1 ? 'edit' : 'edits'}`} />
      {input.edits.map((edit, i) => (
        <section key={i} class="ap-hunk" aria-label={`Edit ${i + 1} of ${n}`}>
          <p class="ap-hunk-head">
            Edit {i + 1} of {n}
            {edit.replace_all === true && ` · ${everyOccurrence}`}
          </p>
          <DiffView before={edit.old_string} after={edit.new_string} />
          <Fields input={edit} omit={['old_string', 'new_string', 'replace_all']} />
        </section>
      ))}
      <Fields input={input} omit={['file_path', 'edits']} />
    </>
  )
}

function WriteView({ input }: { input: WriteInput }) {
  const lines = input.content === '' ? 0 : input.content.split('\n').length
  return (
    <>
      <FilePath
        path={input.file_path}
        note={`new content · ${lines} ${lines === 1 ? 'line' : 'lines'}`}
      />
      {input.content === '' ? (
        <p class="ap-desc">An empty file.</p>
      ) : (
        <CodeText text={input.content} />
      )}
      <Fields input={input} omit={['file_path', 'content']} />
    </>
  )
}

/** Only http(s) becomes a link; anything else is shown as text. */
const safeHref = (url: string) => (/^https?:\/\//i.test(url.trim()) ? url.trim() : undefined)

function WebFetchView({ input }: { input: unknown }) {
  const url = stringField(input, 'url') as string
  const prompt = stringField(input, 'prompt')
  const href = safeHref(url)
  return (
    <>
      <p class="ap-url">
        {href ? (
          <a href={href} target="_blank" rel="noopener noreferrer">
            <Plain text={url} />
          </a>
        ) : (
          <code>
            <Plain text={url} />
          </code>
        )}
      </p>
      {prompt && (
        <div class="ap-prompt">
          <span class="ap-label">Prompt</span>
          <p>
            <Plain text={prompt} />
          </p>
        </div>
      )}
      <Fields input={input} omit={['url', 'prompt']} />
    </>
  )
}
