/**
 * Builds the single executable `dist/hark` for this machine (or `--target bun-linux-arm64`
 * and friends, with `--outfile`). The web app is built first (scripts/build-web.ts); it and the
 * migrations are embedded by their imports.
 * No full --minify: it has broken compiled Elysia apps elsewhere; syntax/whitespace only.
 * `--bytecode`: the bundle's JavaScript is compiled to JavaScriptCore bytecode at build time and
 * embedded beside its source, so a start skips parsing the ~10 MB bundle: `hark --version` and
 * `hark hook` start as fast as an empty program, `hark serve` answers /health sooner (bench/
 * README.md, "Start-up"). Accepted for every release target (cross-compiles included); a
 * runtime that cannot use the bytecode falls back to the embedded source.
 */
import pkg from '../package.json' with { type: 'json' }
import { buildWeb } from './build-web.ts'

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const outfile = option('--outfile') ?? 'dist/hark'
const target = option('--target')
const version = option('--version') ?? process.env.HARK_VERSION ?? pkg.version

const cmd = [
  process.execPath,
  'build',
  '--compile',
  '--bytecode',
  'src/main.ts',
  '--outfile',
  outfile,
  '--minify-syntax',
  '--minify-whitespace',
  '--sourcemap',
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
  '--define',
  `HARK_VERSION=${JSON.stringify(version)}`,
  ...(target ? ['--target', target] : []),
]
await buildWeb()
const started = performance.now()
const proc = Bun.spawnSync(cmd, { stdout: 'inherit', stderr: 'inherit' })
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1)
const size = Bun.file(outfile).size
console.log(
  `built ${outfile} (hark ${version}${target ? `, ${target}` : ''}): ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
)
