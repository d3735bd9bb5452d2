import { type Static, Type as t } from '@sinclair/typebox'

/** Search limits: the query's length, the page, and how far paging goes. */
export const SEARCH = {
  /** Characters (code points) of `q`. */
  queryChars: 200,
  /** Words of `q` that count; the rest are ignored. */
  terms: 16,
  page: 20,
  maxPage: 50,
  /** Only the best this many results are paged through (deeper offsets cost a full sort each). */
  maxResults: 1000,
} as const

export const SearchQuery = t.Object({
  q: t.Optional(
    t.String({
      description: `words to find (at most ${SEARCH.queryChars} characters); each word must occur, the last may be the start of a word`,
    }),
  ),
  limit: t.Optional(t.String({ description: `page size, at most ${SEARCH.maxPage}` })),
  cursor: t.Optional(t.String({ description: "the previous page's `cursor`" })),
})
export type SearchQuery = Static<typeof SearchQuery>

/** A piece of a snippet: text, and whether it is what the search matched. */
export const SnippetPart = t.Object(
  { text: t.String(), match: t.Boolean() },
  { $id: 'SnippetPart' },
)

export const SearchResult = t.Object(
  {
    message_id: t.String({ description: 'the message; the app opens /c/CHANNEL#MESSAGE' }),
    channel_id: t.String(),
    channel_label: t.String(),
    sender: t.Union([t.Literal('agent'), t.Literal('human')]),
    created_at: t.Integer(),
    snippet: t.Array(SnippetPart, {
      description: 'the matched text in context, in parts; render `match` parts highlighted',
    }),
  },
  { $id: 'SearchResult' },
)
export type SearchResult = Static<typeof SearchResult>

export const SearchResponse = t.Object(
  {
    results: t.Array(SearchResult, { description: 'best match first' }),
    cursor: t.Union([t.String(), t.Null()], {
      description: 'pass as `cursor` for the next page; null when there is no more',
    }),
  },
  { $id: 'SearchResponse' },
)
export type SearchResponse = Static<typeof SearchResponse>
