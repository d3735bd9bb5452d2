import { constants } from 'node:os'
import { CliError, EXIT } from '../../../agent/failures.ts'
import {
  fingerprintLine,
  requestSecret,
  secretCheck,
  writeSecretFile,
} from '../../../agent/secrets.ts'
import { UsageError } from '../../../core/errors.ts'
import { flagString } from '../../args.ts'
import { allowsUnsigned } from '../../harness/hook.ts'
import { type AgentCommand, secondsFlag } from '../command.ts'

const USAGE = `hark secret NAME [--description TEXT] [--timeout SECONDS] [--allow-unsigned]
         (--env VAR -- COMMAND [ARG...] | --out FILE | --print)`

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A child's exit code as a shell reports it: its own, or 128 + the signal that ended it. */
function exitCodeOf(proc: { exitCode: number | null; signalCode: string | number | null }): number {
  if (proc.exitCode !== null) return proc.exitCode
  const signal = proc.signalCode
  if (typeof signal === 'number') return 128 + signal
  return 128 + (signal ? (constants.signals[signal as keyof typeof constants.signals] ?? 0) : 0)
}

/** Runs the command with the secret in its environment; stdio is the command's own. */
async function runWith(command: string[], name: string, value: string): Promise<number> {
  let proc: ReturnType<typeof Bun.spawn>
  try {
    proc = Bun.spawn(command, {
      env: { ...process.env, [name]: value },
      stdio: ['inherit', 'inherit', 'inherit'],
    })
  } catch (error) {
    // 127, as a shell says "command not found".
    throw new CliError(`cannot run ${command[0]}: ${(error as Error).message}`, 127)
  }
  await proc.exited
  return exitCodeOf(proc)
}

export const secret: AgentCommand = {
  name: 'secret',
  summary: 'ask the person for a secret, end-to-end encrypted, and use it',
  help: `Usage: ${USAGE}

Asks the person for a secret (a token, a password). The app encrypts it in their browser to a
key that exists only in this process; the server never sees it. Prints the request's
fingerprint on stderr: the person should enter the secret only if the app shows the same.
Waits (by default without limit) until it arrives, then, by the output chosen:

  --env VAR -- COMMAND...  run COMMAND with the secret in $VAR; exits with COMMAND's code
  --out FILE               write the secret to FILE (mode 0600, replacing it)
  --print                  print the secret on stdout (nothing else ever prints it)

Flags:
  --description TEXT   why it is needed, shown to the person
  --timeout SECONDS    stop waiting after this long: the request is withdrawn, exit 124
  --allow-unsigned     take a secret the person's passkey did not sign (weaker: a server could
                       seal a value of its own to this request's key; env HARK_ALLOW_UNSIGNED=1).
                       Without it the secret is used only with a valid signature by a key
                       pinned at "hark init" over exactly the ciphertext received (exit 1).

The server hands the ciphertext out once and then deletes it. A request the person cancelled
exits 1. With --json, --out prints {"id","name","path"} and --print {"id","name","value"}.`,
  valued: ['description', 'env', 'out', 'timeout'],
  booleans: ['print', 'allow-unsigned'],
  async run(c) {
    const { args, io } = c
    const [name, ...command] = args.positionals
    const envName = flagString(args, 'env')
    const out = flagString(args, 'out')
    const print = args.flags.has('print')
    if (name === undefined || name.trim() === '') {
      throw new UsageError(`missing the secret's NAME\nUsage: ${USAGE}`)
    }
    const outputs = [envName !== undefined, out !== undefined, print].filter(Boolean).length
    if (outputs !== 1) {
      throw new UsageError(
        `choose one of --env VAR -- COMMAND, --out FILE or --print\nUsage: ${USAGE}`,
      )
    }
    if (envName !== undefined && !ENV_NAME.test(envName)) {
      throw new UsageError(`--env needs a variable name (letters, digits, _), got "${envName}"`)
    }
    if (envName !== undefined && command.length === 0) {
      throw new UsageError(`--env needs a command after "--"\nUsage: ${USAGE}`)
    }
    if (envName === undefined && command.length > 0) {
      throw new UsageError(`too many arguments ("${command[0]}")\nUsage: ${USAGE}`)
    }
    const timeoutMs = secondsFlag(args, 'timeout')
    const { client } = c.session()

    const { pending, outcome } = await requestSecret(
      client,
      name,
      flagString(args, 'description'),
      {
        timeoutMs,
        onAsked: (asked) => io.note(fingerprintLine(asked.request)),
        onOutage: io.note,
        ...(allowsUnsigned(args.flags.has('allow-unsigned'), c.env)
          ? {}
          : { verify: secretCheck(c.env, c.profile) }),
      },
    )
    if (outcome.status === 'timeout') {
      // Nobody could open an answer once this process exits: withdraw it (best effort).
      await client.cancelSecret(outcome.id).catch(() => {})
      io.note(`no secret yet; the request ${outcome.id} was withdrawn`)
      return EXIT.timeout
    }
    if (outcome.status === 'cancelled') {
      io.note(`the secret request ${outcome.id} was cancelled`)
      return EXIT.error
    }
    const { id, value } = outcome
    if (envName !== undefined) return runWith(command, envName, value)
    if (out !== undefined) {
      writeSecretFile(out, value)
      io.result({ id, name: pending.request.name, path: out }, out)
      return EXIT.ok
    }
    io.result({ id, name: pending.request.name, value }, value)
    return EXIT.ok
  },
}
