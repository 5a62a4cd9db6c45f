import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CommandExitError } from 'e2b'
import { sandbox, scratch, eventually } from './helpers.mjs'

const sbx = await sandbox()

test('run: stdout, stderr and exit code', async () => {
  const r = await sbx.commands.run('echo out; echo err >&2')
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'out\n')
  assert.equal(r.stderr, 'err\n')
  await assert.rejects(sbx.commands.run('exit 3'), (e) => e instanceof CommandExitError && e.exitCode === 3)
})

test('run: env and cwd', async () => {
  const dir = scratch('cwd')
  await sbx.files.makeDir(dir)
  const r = await sbx.commands.run('echo "$SDKTEST_VAR"; pwd', { envs: { SDKTEST_VAR: 'hello env' }, cwd: dir })
  assert.equal(r.stdout, `hello env\n${dir}\n`)
  await sbx.files.remove(dir)
})

test('run: stdin', async () => {
  const h = await sbx.commands.run('cat', { background: true, stdin: true, timeoutMs: 0 })
  await sbx.commands.sendStdin(h.pid, 'line one\n')
  await h.sendStdin('line two\n')
  await sbx.commands.closeStdin(h.pid)
  const r = await h.wait()
  assert.equal(r.stdout, 'line one\nline two\n')
})

test('background, list and kill', async () => {
  const h = await sbx.commands.run('sleep 300', { background: true, timeoutMs: 0 })
  try {
    assert.ok(h.pid > 0)
    const listed = await sbx.commands.list()
    const mine = listed.find((p) => p.pid === h.pid)
    assert.ok(mine, `pid ${h.pid} not in list ${JSON.stringify(listed)}`)
    assert.equal(mine.cmd, '/bin/bash')
    assert.ok(await sbx.commands.kill(h.pid))
    await assert.rejects(h.wait(), (e) => e instanceof CommandExitError)
    await eventually('the killed pid to leave the list', async () => !(await sbx.commands.list()).some((p) => p.pid === h.pid))
    assert.equal(await sbx.commands.kill(h.pid), false)
  } finally {
    await sbx.commands.kill(h.pid).catch(() => {})
  }
})

test('pty: create, input, resize and kill', async () => {
  let out = ''
  const dec = new TextDecoder()
  const enc = new TextEncoder()
  const h = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 0, onData: (d) => { out += dec.decode(d, { stream: true }) } })
  try {
    // Type until the shell answers: input sent before an interactive bash
    // has set up its terminal may be flushed.
    let last = 0
    const typing = (line) => async () => {
      if (Date.now() - last > 1000) { last = Date.now(); await sbx.pty.sendInput(h.pid, enc.encode(line)) }
      return false
    }
    await eventually('stty size 24 80', async () => out.includes('24 80') || typing('stty size\n')())
    await sbx.pty.resize(h.pid, { cols: 100, rows: 30 })
    last = 0
    await eventually('stty size 30 100', async () => (out.includes('30 100') && out.includes('SDKMARK')) || typing('stty size; echo SDK""MARK\n')())
    assert.ok(await sbx.pty.kill(h.pid))
    const r = await h.wait().catch((e) => e)
    assert.ok(r instanceof CommandExitError || r.exitCode !== 0, `pty ended with ${JSON.stringify(r)}`)
  } finally {
    await sbx.pty.kill(h.pid).catch(() => {})
  }
})
