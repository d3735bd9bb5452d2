import { useEffect, useMemo, useState } from 'preact/hooks'
import { Spinner } from './components/ui.tsx'
import { ApiError, errorText } from './lib/api.ts'
import * as client from './lib/client.ts'
import { clearOffline, savedStart, saveStart } from './lib/offline-store.ts'
import { forgetOutbox } from './lib/outbox.ts'
import { onLinkClick, useLocation } from './lib/router.ts'
import { type Session, SessionContext } from './lib/session.ts'
import { passkeysChanged } from './lib/signing.ts'
import type { Info, Me } from './lib/types.ts'
import { ApprovalHistory } from './screens/approval-history.tsx'
import { Enrol } from './screens/enrol.tsx'
import { JoinInfo } from './screens/join.tsx'
import { Login } from './screens/login.tsx'
import { NeedsHttps, needsHttps } from './screens/needs-https.tsx'
import { Pair } from './screens/pair.tsx'
import { Policies } from './screens/policies.tsx'
import { Settings } from './screens/settings.tsx'
import { Setup } from './screens/setup.tsx'
import { Sidebar } from './screens/sidebar.tsx'
import { SignUp } from './screens/signup.tsx'
import { Thread } from './screens/thread.tsx'

/** The app: loads who is logged in, then picks the screen from the path. */
export function App() {
  const [info, setInfo] = useState<Info | null>(null)
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [error, setError] = useState<string | null>(null)
  const loc = useLocation()

  const refreshInfo = async () => setInfo(await client.serverInfo())
  useEffect(() => {
    Promise.all([
      client.serverInfo(),
      client.me().catch((e) => {
        if (e instanceof ApiError && e.status === 401) return null
        throw e
      }),
    ])
      .then(([server, user]) => {
        setInfo(server)
        setMe(user)
        // Kept to start offline next time; nobody logged in: nothing of anyone's is kept.
        if (user) void saveStart(user, server)
        else {
          void clearOffline()
          forgetOutbox()
        }
      })
      .catch(async (e) => {
        // Out of reach: start from what was saved, if anything (offline-store.ts); the feeds
        // retry and the banner says so. A session that ended meanwhile shows once back online.
        const saved = e instanceof ApiError && e.status === 0 ? await savedStart() : undefined
        if (!saved) return setError(errorText(e))
        setInfo(saved.info)
        setMe(saved.me)
      })
  }, [])

  const session = useMemo<Session | null>(
    () =>
      info && me !== undefined
        ? {
            info,
            me,
            // Another person may sign in on this page: the cards read their own passkeys.
            signedIn: (user) => {
              passkeysChanged()
              setMe(user)
              // Someone else's saved threads never show to this person.
              void clearOffline().then(() => info && saveStart(user, info))
            },
            signedOut: () => {
              passkeysChanged()
              // Logging out forgets every saved thread and unsent message on this browser.
              void clearOffline()
              forgetOutbox()
              setMe(null)
              history.replaceState(null, '', '/')
            },
            refreshInfo,
          }
        : null,
    [info, me],
  )

  // Over plain HTTP from another device nothing of Hark can work: say why and what to do.
  if (needsHttps()) return <NeedsHttps info={info} />
  if (error) {
    return (
      <main class="auth">
        <h1>Hark</h1>
        <p class="error-note" role="alert">
          {error}
        </p>
        <button type="button" class="btn" onClick={() => location.reload()}>
          Try again
        </button>
      </main>
    )
  }
  if (!session) return <Spinner label="Starting Hark" />
  return (
    <SessionContext.Provider value={session}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: catches clicks on in-app links */}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: links handle their own keys */}
      <div class="app" onClick={onLinkClick}>
        <Screen path={loc.path} search={loc.search} hash={loc.hash} session={session} />
      </div>
    </SessionContext.Provider>
  )
}

function Screen({
  path,
  search,
  hash,
  session,
}: {
  path: string
  search: URLSearchParams
  hash: string
  session: Session
}) {
  // Screens that work without logging in come first.
  if (path === '/setup') return <Setup />
  if (path === '/join') return <JoinInfo />
  if (path === '/invite') return <SignUp invite={hash} />
  if (path === '/enrol') return <Enrol />
  if (path === '/signup') return <SignUp />
  if (session.info.needs_setup) return <NeedsSetup />
  if (!session.me) return <Login />
  if (path === '/pair') return <Pair code={search.get('code') ?? ''} />
  if (path === '/settings') return <Settings />
  if (path === '/policies') return <Policies />
  // A channel's thread, or (`/approvals`) its approval history.
  const thread = /^\/c\/([^/]+)(\/approvals)?$/.exec(path)
  if (path === '/' || thread) {
    const id = thread ? decodeURIComponent(thread[1] as string) : undefined
    const history = thread?.[2] !== undefined
    return (
      <div class={`split${id ? ' has-thread' : ''}`}>
        <Sidebar activeId={id} />
        <main class="main">
          {id && history ? (
            <ApprovalHistory key={id} id={id} />
          ) : id ? (
            <Thread key={id} id={id} focus={messageOf(hash)} />
          ) : (
            <div class="empty wide-only">
              <p>Pick an agent to see its messages.</p>
            </div>
          )}
        </main>
      </div>
    )
  }
  return <NotFound path={path} />
}

/** An address the app has no screen for (the server answers it 404, with the app). */
function NotFound({ path }: { path: string }) {
  return (
    <main class="auth">
      <h1>Not found</h1>
      <p>
        Hark has no page at <code>{path}</code>.
      </p>
      <p>
        Your agents are on the home screen. Their approvals and questions wait for you there, under{' '}
        <strong>Waiting on you</strong>.
      </p>
      <a class="btn primary" href="/">
        Go to your agents
      </a>
    </main>
  )
}

/** The message a thread link points at (`/c/CHANNEL#MESSAGE`, as a push or the list links). */
function messageOf(hash: string): string | undefined {
  try {
    return hash ? decodeURIComponent(hash) : undefined
  } catch {
    return undefined // a malformed fragment points nowhere
  }
}

function NeedsSetup() {
  return (
    <main class="auth">
      <h1>Hark is not set up yet</h1>
      <p>
        Open the setup link that <code>hark serve</code> printed when it started. It is also in the
        file <code>setup-token</code> in the server’s data directory.
      </p>
    </main>
  )
}
