import * as z from 'zod'
import { LIMITS } from '../../messages/limits.ts'
import { KnownBlocks } from '../../messages/schema.ts'

/**
 * The blocks a model may send, as zod schemas: `tools/list` shows each kind with its fields, so a
 * model writes a table or a choice right the first time instead of guessing from a description.
 * They mirror `KnownBlocks` (src/messages/schema.ts, TypeBox) field for field; the server still
 * checks every block (blocks.ts), these only tell the model what it will accept. Each object is
 * loose, as the server's are: a newer field an older CLI does not know still goes through.
 */
const str = (max: number = LIMITS.textChars) => z.string().max(max)
const title = () => str(LIMITS.titleChars)
const label = () => z.string().min(1).max(LIMITS.titleChars)
// Described once, in blocksArgument: the list repeats these schemas in three tools.
const id = z.string().min(1).max(LIMITS.blockIdChars).optional()

const block = <T extends string, S extends z.ZodRawShape>(type: T, description: string, shape: S) =>
  z.looseObject({ type: z.literal(type), id, ...shape }).describe(description)

const fileId = z.string().min(1).max(64).describe('the file_id the upload tool returned')

const DISPLAY = [
  block('markdown', 'formatted text', { text: str() }),
  block('heading', 'a section heading', { text: title() }),
  block('code', 'a code listing', { code: str(), language: str(64).optional() }),
  block('link', 'a link the person can open', {
    url: z
      .string()
      .max(4096)
      .regex(/^(https?|mailto):/),
    label: title().optional(),
  }),
  block('progress', 'a progress bar: value of max (default 100)', {
    value: z.number(),
    max: z.number().positive().optional(),
    label: title().optional(),
  }),
  block('keyvalue', 'a list of key: value pairs', {
    items: z.array(z.looseObject({ key: title(), value: str() })).max(500),
  }),
  block('table', 'a table; each row has one cell per column', {
    columns: z.array(title()).max(100),
    rows: z.array(z.array(z.union([str(), z.number()]))).max(5000),
  }),
  block('image', 'an uploaded image, shown inline', {
    file_id: fileId,
    name: str(255).optional(),
    alt: title().optional(),
  }),
  block('file', 'an uploaded file the person can download', {
    file_id: fileId,
    name: str(255),
    mime: str(255).optional(),
    size: z.number().int().min(0).optional(),
  }),
  block('html', 'sandboxed HTML; with question: true its reply() is the answer', {
    html: str(LIMITS.bodyBytes),
    label: title().optional(),
    height: z.number().positive().max(2000).optional(),
    question: z.boolean().optional(),
  }),
] as const

const INPUTS = [
  block('choice', 'options to pick from (input)', {
    label: title().optional(),
    options: z
      .array(
        z.looseObject({
          label: label(),
          value: label().optional().describe('what the answer holds (default: the label)'),
          description: str(LIMITS.titleChars * 2).optional(),
          danger: z.boolean().optional(),
        }),
      )
      .min(1)
      .max(LIMITS.choiceOptions),
    multi: z.boolean().optional().describe('several may be picked: the answer is a list'),
    other: z.boolean().optional().describe('the person may type an option of their own'),
    required: z.boolean().optional(),
    default: z.union([title(), z.array(title())]).optional(),
  }),
  block('text_input', 'a typed answer (input)', {
    label: title().optional(),
    placeholder: title().optional(),
    multiline: z.boolean().optional(),
    required: z.boolean().optional(),
    default: str().optional(),
  }),
  block('number_input', 'a number answer (input)', {
    label: title().optional(),
    min: z.number().optional(),
    max: z.number().optional(),
    required: z.boolean().optional(),
    default: z.number().optional(),
  }),
  block('toggle', 'an on/off answer (input)', { label: label(), default: z.boolean().optional() }),
  block('confirm', 'a button to press: the answer is true (input)', {
    label: label(),
    description: str(LIMITS.titleChars * 2).optional(),
    danger: z.boolean().optional(),
  }),
  block('approval', 'allow or deny one tool call; the only input of its message (input)', {
    tool: label(),
    input: z.unknown().describe("the tool's input, any JSON, kept verbatim"),
    summary: title().optional(),
    cwd: str(4096).optional(),
    session: title().optional(),
    scopes: z
      .array(z.enum(['once', 'session']))
      .min(1)
      .max(2)
      .optional(),
    danger: z.boolean().optional(),
  }),
] as const

/** The kinds listed above; a test checks they are every kind a model may send. */
export const TYPED_BLOCK_KINDS: readonly string[] = [...DISPLAY, ...INPUTS].map(
  (b) => b.shape.type.value,
)

/**
 * A kind this CLI does not know (a newer server's), stored by the server as given. Its `type`
 * pattern excludes every known kind, `secret_request` too (only the server makes one): a
 * malformed `table` must fail against the table schema, not slip through here. The check
 * aborts, so that zod reports the known kind's own errors rather than this pattern (see below).
 */
const unknownKind = z
  .looseObject({
    type: z
      .string()
      .min(1)
      .max(64)
      .regex(new RegExp(`^(?!(?:${Object.keys(KnownBlocks).join('|')})$)`), { abort: true }),
    id,
  })
  .describe('a block of a kind not listed here, for a server that knows it')

const isKnownKind = (kind: unknown) => typeof kind === 'string' && Object.hasOwn(KnownBlocks, kind)

/** One line for a model: what is wrong with the fields of a block whose kind it named. */
function knownKindError(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_union') return undefined
  const kind = (issue.input as { type?: unknown } | undefined)?.type
  const errors = issue.errors[0]
  if (!isKnownKind(kind) || !errors?.length) return undefined
  if (!TYPED_BLOCK_KINDS.includes(String(kind))) {
    return `a ${String(kind)} block cannot be sent: only the server makes one`
  }
  const at = (path: PropertyKey[]) => (path.length ? ` at ${path.map(String).join('.')}` : '')
  return `a ${String(kind)} block: ${errors.map((e) => `${e.message}${at(e.path)}`).join('; ')}`
}

export const BlockSchema = z.union(
  [z.discriminatedUnion('type', [...DISPLAY, ...INPUTS]), unknownKind],
  { error: knownKindError },
)

export const blocksArgument = z
  .array(BlockSchema)
  .max(LIMITS.blocks)
  .optional()
  .describe(
    'content blocks, shown in order after the text; give inputs an id when there are several (the answer is then keyed by id)',
  )
