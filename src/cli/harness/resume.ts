import { describeFailure, EXIT } from '../../agent/failures.ts'
import { deferredCards } from '../../agent/harnesses/defer.ts'
import type { Env } from '../../agent/profiles.ts'
import { openSession, profileName } from '../../agent/session.ts'
import { flagString, parseArgs } from '../args.ts'

export const RESUME_HELP = `Usage: hark resume claude SESSION_ID [--profile NAME] [-- CLAUDE_ARGS...]

After a headless run stopped on an action it deferred ("hark hook claude --defer-after"): waits
until the person has answered every card that session left open on the phone, then runs
"claude -p --resume SESSION_ID CLAUDE_ARGS..." in this directory (the hook reads the answer
there) and exits with its status. The session id is in the stopped run's JSON output
(--output-format json: "session_id", with "stop_reason": "tool_deferred").`

const warn = (line: string) => process.stderr.write(`hark resume: ${line}\n`)

export async function runResume(argv: readonly string[], env: Env): Promise<number> {
  const split = argv.indexOf('--')
  const own = split < 0 ? argv : argv.slice(0, split)
  const claudeArgs = split < 0 ? [] : argv.slice(split + 1)
  try {
    const args = parseArgs(own, ['profile'], ['help'])
    const [harness, session, ...extra] = args.positionals
    if (args.flags.has('help') || harness !== 'claude' || !session || extra.length > 0) {
      process.stderr.write(`${RESUME_HELP}\n`)
      return args.flags.has('help') ? EXIT.ok : EXIT.usage
    }
    const { client } = openSession(env, profileName(flagString(args, 'profile'), env), warn)
    for (const id of deferredCards(env, session).keys()) {
      for (;;) {
        const read = await client.ask(id, 30)
        if (read.message.ask?.status !== 'open') break
      }
    }
    const proc = Bun.spawn(['claude', '-p', '--resume', session, ...claudeArgs], {
      env,
      stdio: ['inherit', 'inherit', 'inherit'],
    })
    return await proc.exited
  } catch (error) {
    const failure = describeFailure(error)
    warn(failure.message)
    return failure.exitCode
  }
}
