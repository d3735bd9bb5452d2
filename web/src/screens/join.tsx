import { CopyText } from '../components/ui.tsx'

/** A join link opened in a browser: it is meant for an agent's `hark join`. */
export function JoinInfo() {
  return (
    <main class="auth">
      <h1>This link is for an agent</h1>
      <p class="lead">
        Run this on the machine where the agent works. The link works once and expires 15 minutes
        after it was made.
      </p>
      <CopyText label="join command" text={`hark join ${location.href}`} />
      <p>
        <a href="/">Open Hark</a>
      </p>
    </main>
  )
}
