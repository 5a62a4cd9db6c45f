// Streams N bytes of zeros from a command through E2B's SDK, the way an
// application reads a command's output (onStdout), and prints how long it
// took as JSON. The bench (go run ./bench) runs it beside `sandtop run
// --wait` of the same bytes on the same daemon:
//
//	node stream.mjs 268435456
import { sandbox } from './helpers.mjs'

const want = Number(process.argv[2])
if (!Number.isSafeInteger(want) || want <= 0) {
  console.error('usage: node stream.mjs BYTES')
  process.exit(2)
}
// The SDK's debug mode logs every request; the timing needs none of it.
process.env.E2B_DEBUG = 'true'
console.log = () => {}
const sbx = await sandbox()
// SDKTEST_USER runs the commands as that user (the bench uses nobody, whose
// login shell reads no profile of the machine's own users), in /tmp.
const user = process.env.SDKTEST_USER || undefined
const cwd = user ? '/tmp' : undefined
const start = performance.now()
let got = 0
await sbx.commands.run(`head -c ${want} /dev/zero`, {
  onStdout: (s) => {
    got += s.length // zeros: one character per byte
  },
  timeoutMs: 0,
  user,
  cwd,
})
const ms = performance.now() - start
if (got !== want) {
  process.stderr.write(`stream.mjs: got ${got} bytes of ${want}\n`)
  process.exit(1)
}
process.stdout.write(JSON.stringify({ ms, bytes: got }) + '\n')
