import { createHash } from 'node:crypto'
import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { parseLimit } from '../../core/query.ts'
import { SEARCH, type SearchQuery, type SearchResponse, type SearchResult } from './schema.ts'
import { ftsQuery, MARK_CLOSE, MARK_OPEN, type SearchRow, type SearchTerms } from './store.ts'

/**
 * Full-text search over the person's own messages (issue 18): `q` becomes the words to find,
 * the store ranks and pages, and each hit's snippet is handed over in parts, never as markup.
 */
export async function searchMessages(
  ctx: Ctx,
  userId: string,
  query: SearchQuery,
): Promise<SearchResponse> {
  const q = query.q ?? ''
  if (q.trim() === '') throw fail.invalid('q', 'is required: the words to search for')
  if ([...q].length > SEARCH.queryChars) {
    throw fail.invalid('q', `is longer than ${SEARCH.queryChars} characters`)
  }
  const limit = parseLimit(query.limit, SEARCH.page, SEARCH.maxPage)
  const terms = searchTerms(q)
  // The cursor's tag is of the terms' FTS5 text, as before (cursors given out stay valid): one
  // text per search, whichever engine answers it.
  const match = terms ? ftsQuery(terms) : ''
  const offset = parseSearchCursor(query.cursor, match)
  // Only punctuation: no word to look for, so nothing is found (and nothing is refused).
  if (terms === null) return { results: [], cursor: null }

  const take = Math.min(limit, SEARCH.maxResults - offset)
  const rows = take > 0 ? await ctx.store.search.search(userId, terms, take + 1, offset) : []
  const page = rows.slice(0, take)
  const next = offset + page.length
  return {
    results: page.map(resultOf),
    cursor: rows.length > take && next < SEARCH.maxResults ? cursorOf(next, match) : null,
  }
}

/**
 * The person's words, and whether the last is also a prefix: yes unless `q` ends with a space,
 * so results come while a word is still being typed. Each word is only text (the store quotes
 * it for its engine), so no character of it is query syntax. A word with no letter or digit has
 * nothing the tokenizers keep and is dropped; null when none is left.
 */
export function searchTerms(q: string): SearchTerms | null {
  const words = q
    .split(/\s+/u)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, SEARCH.terms)
  if (words.length === 0) return null
  return { words, prefix: !/\s$/u.test(q) }
}

/**
 * Pages are by offset into the ranked results, in a cursor the client does not read: the
 * offset and a tag of the query it belongs to (a cursor of another search is refused rather
 * than paging that one from the middle). Stable while the person's messages do not change.
 */
const tagOf = (match: string) => createHash('sha256').update(match).digest('base64url').slice(0, 8)

function cursorOf(offset: number, match: string): string {
  return Buffer.from(`${offset}.${tagOf(match)}`).toString('base64url')
}

function parseSearchCursor(raw: string | undefined, match: string): number {
  if (raw === undefined || raw === '') return 0
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(raw) ? Buffer.from(raw, 'base64url').toString() : ''
  const parts = /^(\d{1,7})\.([A-Za-z0-9_-]{8})$/.exec(text)
  if (!parts || Number(parts[1]) > SEARCH.maxResults) {
    throw fail.invalid('cursor', "must be the `cursor` of this search's previous page")
  }
  if (parts[2] !== tagOf(match)) {
    throw fail.invalid('cursor', 'belongs to another search; start again without one')
  }
  return Number(parts[1])
}

function resultOf(row: SearchRow): SearchResult {
  return {
    message_id: row.id,
    channel_id: row.channel_id,
    channel_label: row.channel_label,
    sender: row.sender,
    created_at: row.created_at,
    snippet: snippetParts(row.snippet),
  }
}

/** `a \x02b\x03 c` → `[{ a }, { b, match }, { c }]`: the app marks what matched without markup. */
export function snippetParts(snippet: string): SearchResult['snippet'] {
  const parts: SearchResult['snippet'] = []
  const push = (text: string, match: boolean) => {
    if (text) parts.push({ text, match })
  }
  for (const piece of snippet.split(MARK_OPEN)) {
    const close = piece.indexOf(MARK_CLOSE)
    if (close < 0) push(piece, false)
    else {
      push(piece.slice(0, close), true)
      push(piece.slice(close + 1), false)
    }
  }
  return parts
}
