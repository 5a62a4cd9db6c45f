// Shared setup: one SDK sandbox object in debug mode, pointed at the envd URL
// under test, and a scratch directory inside that sandbox.
import { Sandbox } from 'e2b'
import { randomBytes } from 'node:crypto'

process.env.E2B_DEBUG ??= 'true'

export async function sandbox() {
  return Sandbox.create()
}

// scratch returns a fresh directory path in the sandbox (not yet created).
export function scratch(name) {
  return `/tmp/sdktest-${name}-${randomBytes(4).toString('hex')}`
}

// eventually polls cond until it holds or the deadline passes.
export async function eventually(what, cond, ms = 30000) {
  const end = Date.now() + ms
  for (;;) {
    if (await cond()) return
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
