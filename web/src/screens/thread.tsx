import { Fragment } from 'preact'
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks'
import { READING_EVENT } from '../components/collapse.tsx'
import { Composer } from '../components/composer.tsx'
import { MessageView } from '../components/message.tsx'
import { useMessageWindow } from '../components/message-window.ts'
import { OfflineBanner, PendingMessage } from '../components/offline.tsx'
import { Pins } from '../components/pins.tsx'
import { Button, CopyText, ErrorNote, Spinner, useAction } from '../components/ui.tsx'
import { forgetChannel, markRead, updateChannel, useChannels } from '../lib/channels.ts'
import * as client from '../lib/client.ts'
import { useChannelFeed } from '../lib/feed.ts'
import { onQueuedSent, useOutbox } from '../lib/outbox.ts'
import { navigate, useRevisit } from '../lib/router.ts'
import type { ChannelSummary, Message } from '../lib/types.ts'

/** Older pages read, at most, to find the message a link points at (50 messages each). */
const FOCUS_PAGES = 10

/**
 * One agent's channel: pins on top, the messages, and the composer. Live via the feed.
 * `focus`: the message a link pointed at (a push, the "Waiting on you" list), shown and marked.
 */
export function Thread({ id, focus }: { id: string; focus?: string }) {
  const channels = useChannels()
  const channel = channels?.find((c) => c.id === id)
  const section = useRef<HTMLElement>(null)
  const list = useRef<HTMLDivElement>(null)
  const content = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  // Reading marks the channel read, at most every 300 ms while new things arrive. (The list
  // follows the person-wide feed on its own; a hidden thread leaves the count unread.)
  const readTimer = useRef<ReturnType<typeof setTimeout>>(undefined)
  const onFeedChange = () => {
    clearTimeout(readTimer.current)
    readTimer.current = setTimeout(() => {
      // Not before the divider knows what was unread: marking read would zero the count.
      if (unreadAtOpen.current === undefined) onFeedChange()
      else if (document.visibilityState === 'visible') void markRead(id)
    }, 300)
  }
  const feed = useChannelFeed(id, onFeedChange)
  // Messages written offline, shown after the thread until the server takes each; then it
  // joins the thread at once rather than when the feed brings it.
  const pending = useOutbox(id)
  const upsert = useRef(feed.upsert)
  upsert.current = feed.upsert
  useEffect(() => onQueuedSent((m) => m.channel_id === id && upsert.current(m)), [id])
  // "New messages": above the first message that arrived since the person last read this
  // thread, fixed when it opens (what arrives while they read it is read). The list's unread
  // count (agent messages after the read mark) counted back from the newest message finds it.
  const unreadAtOpen = useRef<{ count: number; last?: string } | undefined>(undefined)
  if (unreadAtOpen.current === undefined && channel && feed.loaded) {
    unreadAtOpen.current = { count: channel.unread, last: feed.messages.at(-1)?.id }
  }
  const newFrom = firstUnread(feed.messages, feed.hasOlder, unreadAtOpen.current)
  // Back to a thread left open in a hidden tab: what arrived meanwhile is unread. It gets the
  // divider (counted as on opening) and is marked read now, not at the next change.
  const latest = useRef({ channel, messages: feed.messages })
  latest.current = { channel, messages: feed.messages }
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return
      const { channel: now, messages } = latest.current
      if (now && now.unread > 0 && unreadAtOpen.current) {
        unreadAtOpen.current = { count: now.unread, last: messages.at(-1)?.id }
      }
      onFeedChange()
    }
    document.addEventListener('visibilitychange', onVisible)
    return () => document.removeEventListener('visibilitychange', onVisible)
  }, [id])

  useEffect(() => {
    stick.current = true
    return () => clearTimeout(readTimer.current)
  }, [id])

  // Where the bottom was before an older page went in on top: keep the same messages in view.
  const fromBottom = useRef<number | undefined>(undefined)

  // Follow the conversation while the person is at the bottom; leave them be when scrolled up.
  useLayoutEffect(() => {
    const el = list.current
    if (!el) return
    if (stick.current) el.scrollTop = el.scrollHeight
    else if (fromBottom.current !== undefined) {
      el.scrollTop = el.scrollHeight - fromBottom.current
    }
    if (!feed.loadingOlder) fromBottom.current = undefined
  }, [feed.messages, feed.loaded, feed.loadingOlder, pending.length])

  // A long thread mounts only what is near the screen (message-window.ts); its effects run
  // after the one above has put the scroll in place, and before the link's below.
  const ids = useMemo(() => feed.messages.map((m) => m.id), [feed.messages])
  const open = useMemo(
    () => new Set(feed.messages.filter((m) => m.ask?.status === 'open').map((m) => m.id)),
    [feed.messages],
  )
  const shown = useMessageWindow(list, ids, open)

  const loadOlder = () => {
    const el = list.current
    if (!feed.hasOlder || feed.loadingOlder || !el) return
    fromBottom.current = el.scrollHeight - el.scrollTop
    feed.loadOlder()
  }

  // The linked message: once it is on the page (after reading older pages if it is not among
  // the newest), scrolled to and marked; the thread stops following the bottom, so the person
  // reads it before anything newer. Runs after the effect above, so it has the last word.
  const [focused, setFocused] = useState<string | undefined>(undefined)
  const seeking = useRef(false)
  seeking.current = focus !== undefined && focused !== focus
  // The address lost its message (Back to the bare thread): the mark goes, and going forward
  // to the message again scrolls to it again.
  useEffect(() => {
    if (!focus) setFocused(undefined)
  }, [focus])
  // A link to the marked message followed again (the address stays the same): scrolled to and
  // marked again, wherever the person has scrolled since.
  useRevisit(() => setFocused(undefined))
  const toDivider = useRef(true)
  /** Older pages read for the current link; each new link has the whole budget. */
  const focusPages = useRef({ for: focus, read: 0 })
  useLayoutEffect(() => {
    if (!focus && feed.loaded && unreadAtOpen.current && toDivider.current) {
      // Opened with more unread than fits: start at the divider, not the newest message (when
      // it is on the page: more unread than loaded opens at the end as before).
      const el = list.current
      const divider = el?.querySelector('.new-divider')
      if (el && !divider && newFrom) return shown.reveal(newFrom) // not mounted: again after
      toDivider.current = false
      if (!el || !divider) return
      const gap = divider.getBoundingClientRect().top - el.getBoundingClientRect().top
      if (el.scrollHeight - (el.scrollTop + gap) > el.clientHeight) {
        stick.current = false
        scrollToTop(divider)
      }
      return
    }
    if (!focus || !feed.loaded || focused === focus) return
    const el = section.current?.querySelector(`article[data-id="${CSS.escape(focus)}"]`)
    if (el) {
      stick.current = false
      fromBottom.current = undefined // the older page's own scroll fix would undo this one
      setFocused(focus)
      // Its own list scrolls, not the page (scrollIntoView would move the page and its header).
      scrollToTop(el)
      return
    }
    if (ids.includes(focus)) {
      // Loaded but not mounted: mount it (this runs again then), away from the bottom.
      stick.current = false
      shown.reveal(focus)
      return
    }
    if (focusPages.current.for !== focus) focusPages.current = { for: focus, read: 0 }
    if (feed.hasOlder && !feed.loadingOlder && focusPages.current.read < FOCUS_PAGES) {
      focusPages.current.read++
      loadOlder()
    }
  }, [
    focus,
    focused,
    feed.messages,
    feed.loaded,
    feed.loadingOlder,
    unreadAtOpen.current,
    shown.key,
  ])

  // Images and embeds grow after they load: stay at the bottom through that too. The list
  // itself shrinks when the composer grows, the pins open or a phone's keyboard comes up: the
  // newest message stays in sight above the composer then as well.
  useEffect(() => {
    const inner = content.current
    const el = list.current
    if (!inner || !el) return
    const observer = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight
    })
    observer.observe(inner)
    // Only a change of the list's own height, and not while a link's message is sought: the
    // search for it reads older pages and scrolls by itself.
    let height = el.clientHeight
    const resized = new ResizeObserver(() => {
      if (el.clientHeight === height) return
      height = el.clientHeight
      if (stick.current && !seeking.current) el.scrollTop = el.scrollHeight
    })
    resized.observe(el)
    // A long block opened at the bottom: the person reads it from where it was cut.
    const reading = () => {
      stick.current = false
    }
    el.addEventListener(READING_EVENT, reading)
    return () => {
      observer.disconnect()
      resized.disconnect()
      el.removeEventListener(READING_EVENT, reading)
    }
  }, [feed.notFound])

  const onScroll = () => {
    const el = list.current
    if (!el) return
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80
    // While an older page is on its way in, the person keeps scrolling: what is kept in view when
    // it lands is where they are now, not where they were when it was asked for.
    if (fromBottom.current !== undefined) fromBottom.current = el.scrollHeight - el.scrollTop
    if (el.scrollTop < 200) loadOlder() // near the top: read the page before, as chat apps do
    shown.onScroll()
  }

  if (feed.notFound) {
    return (
      <div class="empty">
        <p>This channel does not exist (any more).</p>
        <a href="/">Back to your agents</a>
      </div>
    )
  }

  return (
    <section
      class="thread"
      ref={section}
      aria-label={channel ? `Channel ${channel.label}` : 'Channel'}
    >
      <ThreadHeader id={id} channel={channel} />
      <OfflineBanner />
      {feed.pins.length > 0 && (
        <Pins pins={feed.pins} onChange={feed.upsert} focused={focused} focus={focus} />
      )}
      <div class="messages" ref={list} onScroll={onScroll} role="log" aria-label="Messages">
        <div class="messages-inner" ref={content}>
          {!feed.loaded ? (
            <Spinner label="Loading messages" />
          ) : feed.messages.length === 0 && pending.length === 0 ? (
            <p class="empty">No messages yet. The agent’s messages and questions appear here.</p>
          ) : (
            <>
              {feed.hasOlder && (
                <Button variant="quiet" class="older" busy={feed.loadingOlder} onClick={loadOlder}>
                  Show older messages
                </Button>
              )}
              {shown.parts.map((part) => {
                if (typeof part !== 'number') {
                  return (
                    <div key={part.key} class="msg-spacer" style={{ height: `${part.height}px` }} />
                  )
                }
                const m = feed.messages[part] as Message
                return (
                  <Fragment key={m.id}>
                    {m.id === newFrom && <p class="new-divider">New messages</p>}
                    <MessageView message={m} onChange={feed.upsert} focused={m.id === focused} />
                  </Fragment>
                )
              })}
              {pending.map((p) => (
                <PendingMessage key={p.key} send={p} />
              ))}
            </>
          )}
        </div>
      </div>
      <Composer
        channelId={id}
        onSent={(m) => {
          stick.current = true
          feed.upsert(m)
        }}
      />
    </section>
  )
}

/**
 * Scrolls `el`'s own list (`.messages` or `.pins`, never the page: scrollIntoView would move
 * the page and its header) so that `el` is at its top. Messages off screen are laid out at an
 * estimated height (`content-visibility: auto`) until seen, so the place moves once those near
 * it are measured: set again over the next frames until it stays.
 */
function scrollToTop(el: Element, frames = 12) {
  const scroller = el.closest('.messages, .pins')
  if (!scroller) return
  const gap = el.getBoundingClientRect().top - scroller.getBoundingClientRect().top - 8
  if (Math.abs(gap) > 1) scroller.scrollTop += gap
  if (frames > 0) requestAnimationFrame(() => scrollToTop(el, frames - 1))
}

/**
 * Where "New messages" goes: counting back from the newest message at opening, the last of the
 * `count` agent messages that were unread then (in the thread's order); the first message when
 * all are loaded and fewer counted (deleted since); null when nothing was unread or the first
 * unread is still on an older page.
 */
function firstUnread(
  messages: Message[],
  hasOlder: boolean,
  atOpen: { count: number; last?: string } | undefined,
): string | null {
  if (!atOpen || atOpen.count <= 0 || !atOpen.last) return null
  let seen = 0
  let counting = false
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message
    counting ||= m.id === atOpen.last // what arrived after the thread opened was read there
    if (counting && m.sender === 'agent' && ++seen === atOpen.count) return m.id
  }
  // Fewer unread loaded than counted: the first is on an older page, unless there is none.
  return hasOlder || !counting ? null : ((messages[0] as Message).id ?? null)
}

function ThreadHeader({ id, channel }: { id: string; channel?: ChannelSummary }) {
  const [menu, setMenu] = useState(false)
  const [joinLink, setJoinLink] = useState<string | null>(null)
  const [rename, renaming, renameError] = useAction(async () => {
    const label = prompt('Name this agent', channel?.label ?? '')
    if (label === null || !label.trim()) return
    updateChannel(await client.renameChannel(id, label))
  })
  const [rekey, rekeying, rekeyError] = useAction(async () => {
    setJoinLink(await client.createJoinLink({ channel_id: id }))
  })
  const [remove, removing, removeError] = useAction(async () => {
    if (
      !confirm(
        `Delete “${channel?.label ?? 'this channel'}” with all its messages and files? Its agent’s token stops working.`,
      )
    )
      return
    await client.deleteChannel(id)
    forgetChannel(id)
    navigate('/')
  })
  return (
    <header class="thread-head">
      <a class="back" href="/" aria-label="All agents">
        ‹
      </a>
      <h2>{channel?.label ?? '…'}</h2>
      <Button
        variant="quiet"
        aria-expanded={menu}
        aria-controls="thread-menu"
        onClick={() => setMenu(!menu)}
      >
        Manage
      </Button>
      {menu && (
        <div class="thread-menu" id="thread-menu">
          <a class="btn" href={`/c/${encodeURIComponent(id)}/approvals`}>
            Approval history
          </a>
          <Button busy={renaming} onClick={() => rename()}>
            Rename
          </Button>
          <Button busy={rekeying} onClick={() => rekey()}>
            Give the agent a new token
          </Button>
          <Button variant="danger" busy={removing} onClick={() => remove()}>
            Delete channel
          </Button>
          <ErrorNote error={renameError ?? rekeyError ?? removeError} />
          {joinLink && (
            <div>
              <p>
                On the agent’s machine, run this within 15 minutes. The old token stops working once
                it is used.
              </p>
              <CopyText label="join command" text={`hark join ${joinLink}`} />
            </div>
          )}
        </div>
      )}
    </header>
  )
}
