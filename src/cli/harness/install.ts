import { describeFailure, EXIT } from '../../agent/failures.ts'
import type { Env } from '../../agent/profiles.ts'
import { profileName, resolveConnection } from '../../agent/session.ts'
import { UsageError } from '../../core/errors.ts'
import { flagString, parseArgs } from '../args.ts'
import { harkCommand } from './files.ts'
import { DEFAULT_HOOK_WAIT_S } from './hook.ts'
import { type Change, installClaude, type Scope } from './install-claude.ts'
import { installCodex } from './install-codex.ts'

export const INSTALL_HELP = `Usage: hark install claude [--scope user|project|local] [--reply] [--channel] [--remove]
       hark install codex  [--remove]
Flags for both: [--wait SECONDS] [--profile NAME] [--allow-unsigned]

Connects a coding agent to Hark, so its approvals and questions come to your phone.
  claude  Claude Code: hooks for PermissionRequest (approvals, AskUserQuestion), Elicitation,
          Notification, Stop, PostToolUse, PostToolUseFailure and PermissionDenied, each running
          "hark hook claude" with a timeout above the wait, and the "hark" MCP server (tools,
          and the approve tool for --permission-prompt-tool). Scope (default user): user = ~/.claude/settings.json and
          ~/.claude.json; project = .claude/settings.json and .mcp.json (shared with the
          repository); local = .claude/settings.local.json and ~/.claude.json for this directory.
  codex   Codex: the PermissionRequest hook in $CODEX_HOME/hooks.json, trusted in
          $CODEX_HOME/config.toml, and notify (a message after each turn). In "codex exec",
          approvals need --approve-for-me.

  --reply         Claude Code: when a session stops, wait for your reply and continue with it
  --channel       Claude Code: the "hark" MCP server is also a channel (research preview): what
                  you write to the agent in Hark reaches the running session, and permission
                  prompts relay to your phone. Start Claude Code with
                  claude --dangerously-load-development-channels server:hark
                  (the channel needs an Anthropic account with channels enabled). With the hooks
                  installed too, each prompt gets one card: the hook's.
  --wait SECONDS  how long a hook waits for you (default ${DEFAULT_HOOK_WAIT_S})
  --remove        take out only what hark added; everything else stays
  --allow-unsigned  act on allows and answers the person's passkey did not sign (weaker: for
                  people who log in by email code only). Without it an allow, a Stop reply,
                  an AskUserQuestion or elicitation answer counts only when signed by a
                  passkey pinned at "hark init" (see "hark keys").

Installing again replaces hark's entries; nothing else in those files changes.`

const SCOPES: readonly Scope[] = ['user', 'project', 'local']

export async function runInstall(argv: readonly string[], env: Env): Promise<number> {
  try {
    return install(argv, env)
  } catch (error) {
    const failure = describeFailure(error)
    process.stderr.write(`hark install: ${failure.message}\n`)
    return failure.exitCode
  }
}

function install(argv: readonly string[], env: Env): number {
  const args = parseArgs(
    argv,
    ['scope', 'wait', 'profile'],
    ['reply', 'remove', 'help', 'allow-unsigned', 'channel'],
  )
  const [target, ...extra] = args.positionals
  if (args.flags.has('help')) {
    process.stdout.write(`${INSTALL_HELP}\n`)
    return EXIT.ok
  }
  if (target !== 'claude' && target !== 'codex') {
    throw new UsageError(`say what to install: claude or codex\n\n${INSTALL_HELP}`)
  }
  if (extra.length > 0) throw new UsageError(`too many arguments ("${extra[0]}")`)
  const scope = (flagString(args, 'scope') ?? 'user') as Scope
  if (!SCOPES.includes(scope)) throw new UsageError(`--scope must be user, project or local`)
  if (
    target === 'codex' &&
    (args.flags.has('scope') || args.flags.has('reply') || args.flags.has('channel'))
  ) {
    throw new UsageError('--scope, --reply and --channel are for claude only')
  }
  const rawWait = flagString(args, 'wait')
  const waitSeconds = rawWait === undefined ? DEFAULT_HOOK_WAIT_S : Number(rawWait)
  if (!Number.isInteger(waitSeconds) || waitSeconds < 1 || waitSeconds > 86_400) {
    throw new UsageError(`--wait must be whole seconds from 1 to 86400 (got "${rawWait}")`)
  }
  const profile = flagString(args, 'profile')
  const remove = args.flags.has('remove')
  const allowUnsigned = args.flags.has('allow-unsigned')
  const common = { hark: harkCommand(), waitSeconds, profile, remove, allowUnsigned }
  const changes: Change[] =
    target === 'claude'
      ? installClaude(env, {
          ...common,
          scope,
          dir: process.cwd(),
          reply: args.flags.has('reply'),
          channel: args.flags.has('channel'),
        })
      : installCodex(env, common)
  for (const c of changes) process.stdout.write(`${c.path}: ${c.what}\n`)
  if (!remove) {
    const connection = resolveConnection(env, profileName(profile, env))
    if (!connection.url || !connection.token) {
      process.stderr.write(
        'hark install: not connected yet: run "hark init URL" (or set HARK_URL and HARK_TOKEN) so the hooks can reach your server\n',
      )
    }
  }
  return EXIT.ok
}
