import { useEffect, useRef, useState } from 'preact/hooks'
import { errorText } from './api.ts'
import * as client from './client.ts'
import type { SearchResult } from './types.ts'

/** How long typing pauses before the search runs, in ms. */
export const SEARCH_DEBOUNCE_MS = 250

export interface SearchState {
  /** The query these results are for ('' before any search). */
  for: string
  results: SearchResult[]
  /** The next page's cursor; null when there is no more. */
  cursor: string | null
  loading: boolean
  error: string | null
}

const idle: SearchState = { for: '', results: [], cursor: null, loading: false, error: null }

/**
 * The person's search as they type: runs `query` once typing pauses, drops an answer that a
 * newer query overtook (its request is aborted), and pages on with `more()`.
 */
export function useSearch(query: string): SearchState & { more(): void } {
  const [state, setState] = useState<SearchState>(idle)
  const running = useRef<AbortController | null>(null)

  const run = (q: string, cursor: string | null) => {
    running.current?.abort()
    const abort = new AbortController()
    running.current = abort
    setState((s) => ({ ...s, loading: true, error: null }))
    client.searchMessages(q, cursor, abort.signal).then(
      (page) => {
        if (abort.signal.aborted) return
        setState((s) => ({
          for: q,
          // A page after the first adds to the list; one result is never shown twice.
          results: cursor
            ? [...s.results, ...page.results.filter((r) => !has(s.results, r))]
            : page.results,
          cursor: page.cursor,
          loading: false,
          error: null,
        }))
      },
      (error) => {
        if (abort.signal.aborted) return
        setState((s) => ({ ...s, loading: false, error: errorText(error) }))
      },
    )
  }

  useEffect(() => {
    const q = query.trim() ? query : ''
    if (!q) {
      running.current?.abort()
      setState(idle)
      return
    }
    const timer = setTimeout(() => run(q, null), SEARCH_DEBOUNCE_MS)
    return () => clearTimeout(timer)
  }, [query])

  useEffect(() => () => running.current?.abort(), [])

  return {
    ...state,
    more: () => {
      if (state.cursor && !state.loading) run(state.for, state.cursor)
    },
  }
}

const has = (list: SearchResult[], r: SearchResult) =>
  list.some((x) => x.message_id === r.message_id)
