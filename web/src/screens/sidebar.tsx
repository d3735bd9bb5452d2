import { useRef, useState } from 'preact/hooks'
import { OfflineBanner } from '../components/offline.tsx'
import { PendingPairings } from '../components/pending-pairings.tsx'
import { SearchResults } from '../components/search-results.tsx'
import { useSearch } from '../lib/search.ts'
import { ChannelList } from './channel-list.tsx'

/** Characters of a query (the server's limit too). */
const QUERY_CHARS = 200

/**
 * The sidebar: Hark's name, Settings, the one search box, and the person's agents, or what
 * the search found while there is a query. The list stays mounted (hidden) during a search:
 * it keeps following the feed, the title and the badge. The query outlives opening a result,
 * so Back on a phone comes back to the same results.
 */
export function Sidebar({ activeId }: { activeId?: string }) {
  const [query, setQuery] = useState('')
  const search = useSearch(query)
  const input = useRef<HTMLInputElement>(null)
  const searching = query.trim() !== ''
  return (
    <aside class="sidebar" aria-label="Your agents">
      <header class="sidebar-head">
        <h1>
          <img src="/icons/favicon-32.png" alt="" width="24" height="24" /> Hark
        </h1>
        <a href="/settings" class="btn quiet">
          Settings
        </a>
        <search class="search-form">
          <form
            onSubmit={(e) => {
              e.preventDefault()
              input.current?.blur() // a phone's keyboard goes away to show the results
            }}
          >
            <input
              ref={input}
              type="search"
              class="search-input"
              aria-label="Search messages"
              placeholder="Search messages"
              maxLength={QUERY_CHARS}
              autoComplete="off"
              enterKeyHint="search"
              value={query}
              onInput={(e) => setQuery(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Escape') setQuery('')
              }}
            />
          </form>
        </search>
      </header>
      {/* With a thread open, the thread says it (one cue on screen, where the person reads). */}
      {!activeId && <OfflineBanner />}
      {searching && <SearchResults search={search} onMore={search.more} />}
      <div class="sidebar-list" hidden={searching}>
        <PendingPairings />
        <ChannelList activeId={activeId} />
      </div>
    </aside>
  )
}
