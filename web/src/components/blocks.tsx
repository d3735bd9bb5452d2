import { INPUT_TYPES } from '../../../src/shared/blocks.ts'
import { fileUrl } from '../lib/client.ts'
import { bytes } from '../lib/format.ts'
import type { Block } from '../lib/types.ts'
import { CopyButton, MoreButton, useCollapse } from './collapse.tsx'
import { HtmlEmbed } from './html-embed.tsx'
import { Markdown } from './markdown.tsx'
import { SecretRequest } from './secret-request.tsx'

/** Display blocks, one component per type; input blocks are the question form's. */

const str = (v: unknown) =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v)
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

function safeHref(url: string): string | undefined {
  return /^(?:https?:|mailto:)/i.test(url.trim()) ? url.trim() : undefined
}

function Progress({ block }: { block: Block }) {
  const max = num(block.max) ?? 100
  const value = Math.min(Math.max(num(block.value) ?? 0, 0), max)
  const percent = Math.round((value / max) * 100)
  const label = str(block.label)
  return (
    <div class="b-progress">
      <div class="b-progress-head">
        <span>{label || 'Progress'}</span>
        <span class="b-progress-value">
          {num(block.max) === undefined ? `${percent}%` : `${value} / ${max}`}
        </span>
      </div>
      <progress value={value} max={max} aria-label={label || 'Progress'} />
    </div>
  )
}

function KeyValue({ block }: { block: Block }) {
  const items = Array.isArray(block.items)
    ? (block.items as { key: unknown; value: unknown }[])
    : []
  return (
    <dl class="b-keyvalue">
      {items.map((item, i) => (
        <div key={i}>
          <dt>{str(item.key)}</dt>
          <dd>{str(item.value)}</dd>
        </div>
      ))}
    </dl>
  )
}

function Table({ block }: { block: Block }) {
  const columns = Array.isArray(block.columns) ? (block.columns as unknown[]) : []
  const rows = Array.isArray(block.rows) ? (block.rows as unknown[][]) : []
  const collapse = useCollapse<HTMLElement>([block])
  return (
    <div class="b-table-wrap">
      {/* A wide table scrolls on its own; the region makes that scroll reachable by keyboard. */}
      <section
        class={['b-table', collapse.cut].filter(Boolean).join(' ')}
        aria-label="Table"
        tabindex={0}
        id={collapse.id}
        ref={collapse.ref}
      >
        <table>
          <thead>
            <tr>
              {columns.map((c, i) => (
                <th key={i} scope="col">
                  {str(c)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, r) => (
              <tr key={r}>
                {(Array.isArray(row) ? row : []).map((cell, c) => (
                  <td key={c} class={typeof cell === 'number' ? 'num' : undefined}>
                    {str(cell)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <MoreButton collapse={collapse} what="table" />
    </div>
  )
}

/** A code block or a log: a copy button, sideways scrolling, long ones cut (collapse.tsx). */
function Code({ block }: { block: Block }) {
  const language = str(block.language)
  const code = str(block.code)
  const collapse = useCollapse<HTMLPreElement>([code])
  // Focusable and named only when it scrolls sideways: a keyboard can then scroll it.
  const scrolls = collapse.wide
    ? { tabindex: 0, role: 'region' as const, 'aria-label': language ? `${language} code` : 'Code' }
    : {}
  return (
    <figure class="b-code">
      {language && <figcaption>{language}</figcaption>}
      <CopyButton
        text={code}
        source={collapse.ref}
        label={language ? `Copy ${language} code` : 'Copy code'}
      />
      <pre ref={collapse.ref} id={collapse.id} class={collapse.cut} {...scrolls}>
        <code data-language={language || undefined}>{code}</code>
      </pre>
      <MoreButton collapse={collapse} what="code" />
    </figure>
  )
}

export function DisplayBlock({
  block,
  channelId,
  onHtmlReply,
}: {
  block: Block
  channelId: string
  onHtmlReply?: (value: unknown) => void
}) {
  switch (block.type) {
    case 'markdown':
      return <Markdown text={str(block.text)} />
    case 'heading':
      return <h4 class="b-heading">{str(block.text)}</h4>
    case 'code':
      return <Code block={block} />
    case 'link': {
      const url = str(block.url)
      const href = safeHref(url)
      const label = str(block.label) || url
      if (!href) return <p class="b-link">{label}</p>
      return (
        <p class="b-link">
          <a href={href} target="_blank" rel="noopener noreferrer">
            {label}
          </a>
          {label !== url && <span class="b-link-url">{url}</span>}
        </p>
      )
    }
    case 'progress':
      return <Progress block={block} />
    case 'keyvalue':
      return <KeyValue block={block} />
    case 'table':
      return <Table block={block} />
    case 'image': {
      const name = str(block.name)
      return (
        <figure class="b-image">
          <a href={fileUrl(channelId, str(block.file_id))} target="_blank" rel="noopener">
            <img
              src={fileUrl(channelId, str(block.file_id))}
              alt={str(block.alt) || name || 'Image'}
              loading="lazy"
            />
          </a>
          {name && <figcaption>{name}</figcaption>}
        </figure>
      )
    }
    case 'file': {
      const size = num(block.size)
      const name = str(block.name) || 'file'
      return (
        <a class="b-file" href={fileUrl(channelId, str(block.file_id))} download={name}>
          <span class="b-file-icon" aria-hidden="true">
            ⬇
          </span>
          <span class="b-file-name">{name}</span>
          <span class="b-file-meta">
            {[size !== undefined ? bytes(size) : '', str(block.mime)].filter(Boolean).join(' · ')}
          </span>
        </a>
      )
    }
    case 'secret_request':
      return <SecretRequest block={block} />
    case 'html':
      return (
        <HtmlEmbed
          html={str(block.html)}
          label={str(block.label) || undefined}
          height={num(block.height)}
          onReply={block.question === true ? onHtmlReply : undefined}
        />
      )
    default:
      if (INPUT_TYPES.has(block.type)) return null
      return (
        <p class="b-unknown">
          This message has a “{block.type}” block that this version of the app can’t show. Update
          the app to see it.
        </p>
      )
  }
}
