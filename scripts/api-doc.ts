/**
 * Writes docs/api.md, Hark's HTTP API reference, from the OpenAPI document the server serves
 * (`GET /v1/openapi.json`, built from the routes' TypeBox schemas and `doc()`): the reference
 * cannot say something the code does not do. test/api/api-doc.test.ts fails when the file is
 * not what this script would write now. With it, src/shared/api-types.gen.ts, the web app's
 * record types printed from the same schemas (scripts/api-types.ts): both change together.
 *
 *   bun scripts/api-doc.ts           # writes docs/api.md and src/shared/api-types.gen.ts
 *   bun scripts/api-doc.ts --check   # exit 1 when either is out of date
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { API_INTRO } from './api-doc-intro.ts'
import { API_TYPES, renderApiTypes } from './api-types.ts'

interface Schema {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  const?: unknown
  enum?: unknown[]
  description?: string
  default?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  pattern?: string
  additionalProperties?: boolean | Schema
  patternProperties?: Record<string, Schema>
}
interface Parameter {
  name: string
  in: string
  required?: boolean
  description?: string
  schema?: Schema
}
interface Response {
  $ref?: string
  description?: string
  content?: Record<string, { schema?: Schema }>
}
interface Operation {
  operationId?: string
  tags?: string[]
  summary?: string
  description?: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }
  responses?: Record<string, Response>
  security?: Record<string, string[]>[]
}
export interface OpenApiSpec {
  paths: Record<string, Record<string, Operation>>
  security?: Record<string, string[]>[]
  components: { schemas: Record<string, Schema>; responses?: Record<string, Response> }
}

/** The tags in the order the reference lists them, with their section titles. */
const SECTIONS: readonly [tag: string, title: string][] = [
  ['public', 'Public'],
  ['messages', 'Messages (agent)'],
  ['asks', 'Questions (agent)'],
  ['pins', 'Pins (agent)'],
  ['files', 'Files (agent)'],
  ['channel', 'The channel (agent)'],
  ['secrets', 'Secret requests (agent)'],
  ['pairing', 'Connecting an agent'],
  ['person', "The person's channels, messages and answers"],
  ['auth', 'Signing in'],
  ['passkeys', 'Passkeys'],
  ['sessions', 'Sessions'],
  ['tokens', 'Person tokens'],
  ['people', 'People, invites and settings'],
  ['push', 'Notifications'],
]
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
export const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

const refName = (ref: string) => ref.split('/').at(-1) as string
const link = (name: string) => `[${name}](#${slug(name)})`
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')
const code = (value: unknown) => `\`${JSON.stringify(value)}\``

/** A schema as a short type: `string`, `Block[]`, `"agent" \| "human"`, `{ key: string }`. */
export function typeOf(s: Schema | undefined, depth = 0): string {
  if (!s) return 'any'
  if (s.$ref) return link(refName(s.$ref))
  if (s.const !== undefined) return code(s.const)
  if (s.enum) return s.enum.map(code).join(' | ')
  const union = s.anyOf ?? s.oneOf
  if (union) return union.map((u) => typeOf(u, depth)).join(' | ')
  if (s.allOf) return s.allOf.map((u) => typeOf(u, depth)).join(' & ')
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
  if (types.length > 1) return types.map((t) => typeOf({ ...s, type: t }, depth)).join(' | ')
  if (types[0] === 'array') return `${wrap(typeOf(s.items, depth))}[]`
  if (types[0] === 'object' || s.properties) {
    const props = Object.entries(s.properties ?? {})
    if (props.length === 0 || depth > 1) return 'object'
    const required = new Set(s.required ?? [])
    const fields = props.map(
      ([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeOf(v, depth + 1)}`,
    )
    return `{ ${fields.join(', ')} }`
  }
  return types[0] ?? 'any'
}

const wrap = (type: string) => (type.includes(' ') && !type.startsWith('{') ? `(${type})` : type)

const range = (min: number | undefined, max: number | undefined, unit: string) => {
  if (max !== undefined) return `${min ?? 0} to ${max} ${unit}`
  if (min !== undefined && min > 0) return `at least ${min} ${unit}`
  return undefined
}

/** What a field's description does not say: its bounds and default. */
function constraints(s: Schema): string {
  const out: string[] = []
  const length = range(s.minLength, s.maxLength, 'characters')
  if (length) out.push(length)
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`)
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`)
  const items = range(s.minItems, s.maxItems, 'items')
  if (items) out.push(items)
  if (s.pattern !== undefined) out.push(`pattern \`${s.pattern}\``)
  if (s.default !== undefined) out.push(`default ${code(s.default)}`)
  return out.join('; ')
}

const describe = (s: Schema | undefined) =>
  cell([s?.description, s ? constraints(s) : ''].filter((t) => t).join('. '))

function fieldTable(s: Schema): string[] {
  const required = new Set(s.required ?? [])
  const rows = Object.entries(s.properties ?? {}).map(
    ([name, field]) =>
      `| \`${name}\` | ${cell(typeOf(field))} | ${required.has(name) ? 'yes' : ''} | ${describe(field)} |`,
  )
  return ['| field | type | required | notes |', '| --- | --- | --- | --- |', ...rows]
}

/** Who may call an operation, from its security (or the document's). */
function caller(path: string, security: Record<string, string[]>[]): string {
  const schemes = new Set(security.flatMap((s) => Object.keys(s)))
  if (schemes.size === 0) return 'anyone (public)'
  if (schemes.has('session') && schemes.has('bearer')) return 'the person: person token or session'
  if (schemes.has('session')) return 'the person: browser session'
  return path.startsWith('/v1/app/') ? 'the person: person token' : 'the agent: agent token'
}

function body(op: Operation): string | undefined {
  const content = op.requestBody?.content
  if (!content) return undefined
  const [media, entry] = Object.entries(content)[0] ?? []
  if (media === undefined) return undefined
  const what = media === 'application/json' ? typeOf(entry?.schema) : `raw bytes (\`${media}\`)`
  return `Body${op.requestBody?.required ? '' : ' (optional)'}: ${what}`
}

function answers(op: Operation, errorNames: Map<string, string>): string[] {
  const lines: string[] = []
  const errors: string[] = []
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (status === 'default') continue
    if (response.$ref) {
      const name = refName(response.$ref)
      errorNames.set(status, name)
      errors.push(`\`${status}\``)
      continue
    }
    const [media, entry] = Object.entries(response.content ?? {})[0] ?? []
    const what =
      media === undefined
        ? (response.description ?? '')
        : media === 'application/json'
          ? typeOf(entry?.schema)
          : `\`${media}\` ${response.description ?? ''}`.trim()
    lines.push(`Answer \`${status}\`: ${what}`)
  }
  if (errors.length > 0) lines.push(`Errors: ${errors.join(', ')} ([errors](#errors))`)
  return lines
}

function operation(
  method: string,
  path: string,
  op: Operation,
  spec: OpenApiSpec,
  errorNames: Map<string, string>,
): string[] {
  const out = [
    `### ${op.summary ?? `${method.toUpperCase()} ${path}`}`,
    '',
    `\`${method.toUpperCase()} ${path}\` · ${caller(path, op.security ?? spec.security ?? [])} · \`${op.operationId}\``,
    '',
  ]
  if (op.description) out.push(op.description, '')
  const params = op.parameters ?? []
  if (params.length > 0) {
    out.push('| parameter | in | type | required | notes |', '| --- | --- | --- | --- | --- |')
    for (const p of params) {
      // The same on every agent write: said once, under Conventions.
      const notes =
        p.name === 'Idempotency-Key'
          ? 'makes the write safe to retry ([conventions](#conventions))'
          : cell([p.description, describe(p.schema)].filter((t) => t).join('. '))
      out.push(
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${notes} |`,
      )
    }
    out.push('')
  }
  const sent = body(op)
  for (const line of [...(sent ? [sent] : []), ...answers(op, errorNames)]) out.push(`${line}  `)
  out.push('')
  return out
}

function schemaSection(name: string, s: Schema): string[] {
  const out = [`### ${name}`, '']
  if (s.description) out.push(cell(s.description), '')
  if (s.properties) out.push(...fieldTable(s))
  else out.push(`${typeOf(s.$ref ? s : { ...s, description: undefined })}`)
  out.push('')
  return out
}

/** The whole of docs/api.md. */
export function renderApiDoc(spec: OpenApiSpec): string {
  const errorNames = new Map<string, string>()
  const sections: string[] = []
  const contents: string[] = []
  const tags = new Set<string>()
  for (const ops of Object.values(spec.paths)) {
    for (const op of Object.values(ops)) for (const t of op.tags ?? ['other']) tags.add(t)
  }
  const known = new Set(SECTIONS.map(([t]) => t))
  const order = [...SECTIONS, ...[...tags].filter((t) => !known.has(t)).map((t) => [t, t] as const)]
  for (const [tag, title] of order) {
    const lines: string[] = []
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const method of METHODS) {
        const op = ops[method]
        if (op && (op.tags ?? ['other']).includes(tag)) {
          lines.push(...operation(method, path, op, spec, errorNames))
        }
      }
    }
    if (lines.length === 0) continue
    contents.push(`- [${title}](#${slug(title)})`)
    sections.push(`## ${title}`, '', ...lines)
  }
  const responses = spec.components.responses ?? {}
  const errorRows = [...errorNames.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, name]) => `| \`${status}\` | ${cell(responses[name]?.description ?? name)} |`)
  const schemas = Object.keys(spec.components.schemas).sort((a, b) => a.localeCompare(b))
  return [
    '# The HTTP API',
    '',
    '<!-- Generated by `bun scripts/api-doc.ts` from `GET /v1/openapi.json`; do not edit by hand',
    '     (test/api/api-doc.test.ts fails when it differs from what the code serves). -->',
    '',
    API_INTRO.trim(),
    '',
    '## Errors',
    '',
    'Every error is JSON, `{ "error": "what is wrong", "field": "where" }` (`field` only when one',
    'field is at fault), with one of these statuses:',
    '',
    '| status | meaning |',
    '| --- | --- |',
    ...errorRows,
    '',
    '## Contents',
    '',
    ...contents,
    '- [Schemas](#schemas)',
    '',
    ...sections,
    '## Schemas',
    '',
    'The records and requests named above, as the OpenAPI document names them.',
    '',
    ...schemas.flatMap((name) => schemaSection(name, spec.components.schemas[name] as Schema)),
  ]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\n*$/, '\n')
}

/** The document the server serves, from an app built on a throw-away data directory. */
export async function openApiSpec(): Promise<OpenApiSpec> {
  const { DEFAULTS } = await import('../src/core/config.ts')
  const { createContext, closeContext } = await import('../src/server/context.ts')
  const { buildApp } = await import('../src/server/app.ts')
  const { silentLogger } = await import('../src/core/log.ts')
  const dir = mkdtempSync(join(tmpdir(), 'hark-api-doc-'))
  try {
    const base = 'http://localhost:8080'
    const ctx = await createContext(
      { ...DEFAULTS, dataDir: dir, host: '127.0.0.1', port: 0, baseUrl: base },
      { log: silentLogger },
    )
    try {
      const res = await buildApp(ctx).handle(new Request(`${base}/v1/openapi.json`))
      return (await res.json()) as OpenApiSpec
    } finally {
      await closeContext(ctx)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const API_DOC = join(import.meta.dir, '..', 'docs', 'api.md')

if (import.meta.main) {
  const files: [path: string, text: string][] = [
    [API_DOC, renderApiDoc(await openApiSpec())],
    [API_TYPES, renderApiTypes()],
  ]
  const check = process.argv.includes('--check')
  let stale = false
  for (const [path, text] of files) {
    const name = relative(join(import.meta.dir, '..'), path)
    if (!check) {
      writeFileSync(path, text)
      process.stdout.write(`wrote ${name}\n`)
    } else if (readFileSync(path, 'utf8') !== text) {
      process.stderr.write(`${name} is out of date: run bun scripts/api-doc.ts\n`)
      stale = true
    } else process.stdout.write(`${name} is up to date\n`)
  }
  if (stale) process.exit(1)
}
