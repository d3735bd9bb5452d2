import { fromNow, fullDate } from '../lib/format.ts'
import type { SearchState } from '../lib/search.ts'
import type { SearchResult } from '../lib/types.ts'

/**
 * What the sidebar's search found: each hit's agent, time and the words around the match, the
 * match marked (<mark> elements made here from the server's parts: no markup from the server
 * is ever parsed). A hit opens its message in its thread (`/c/CHANNEL#MESSAGE`).
 */
export function SearchResults({ search, onMore }: { search: SearchState; onMore: () => void }) {
  const { results, loading, error, cursor } = search
  const status = error
    ? error
    : loading && results.length === 0
      ? 'Searching…'
      : results.length === 0
        ? 'No messages match.'
        : `${results.length}${cursor ? '+' : ''} ${results.length === 1 ? 'message' : 'messages'}`
  return (
    <section class="search-results" aria-label="Search results">
      <p class={`search-status${error ? ' error-note' : ''}`} role="status">
        {status}
      </p>
      <ul class="channel-list">
        {results.map((r) => (
          <li key={r.message_id}>
            <Hit hit={r} />
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" class="btn quiet search-more" onClick={onMore} disabled={loading}>
          {loading ? 'Loading…' : 'More results'}
        </button>
      )}
    </section>
  )
}

function Hit({ hit }: { hit: SearchResult }) {
  const href = `/c/${encodeURIComponent(hit.channel_id)}#${encodeURIComponent(hit.message_id)}`
  return (
    <a href={href} class="channel search-hit" data-message={hit.message_id}>
      <span class="channel-top">
        <span class="channel-label">{hit.channel_label}</span>
        <time
          class="channel-time"
          dateTime={new Date(hit.created_at).toISOString()}
          title={fullDate(hit.created_at)}
        >
          {fromNow(hit.created_at)}
        </time>
      </span>
      <span class="search-snippet">
        {hit.sender === 'human' && <span class="search-you">You: </span>}
        {hit.snippet.map((part, i) => (part.match ? <mark key={i}>{part.text}</mark> : part.text))}
      </span>
    </a>
  )
}
