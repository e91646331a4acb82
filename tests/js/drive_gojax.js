// Drives `gojax gtp` through Sabaki's own GTP library (@sabaki/gtp), as Sabaki does: an
// lz-analyze stream stopped by the next command, a genmove, printsgf.  Prints one JSON object
// (what a GUI would show) for tests/test_gui_clients.py to check.
const {Controller} = require('@sabaki/gtp')

// Sabaki reads an analysis line as `info move M visits V winrate W prior P ... pv ...` per move.
function parseAnalysis(line) {
  return line.split(/\s*info\s+/).slice(1).map(entry => {
    const [head, pv] = entry.split(/\s+pv\s+/)
    const words = head.trim().split(/\s+/)
    const out = {pv: pv ? pv.trim().split(/\s+/) : []}
    for (let i = 0; i + 1 < words.length; i += 2) out[words[i]] = words[i + 1]
    return out
  })
}

async function main() {
  const [python, ...engineArgs] = process.argv.slice(2)
  const engine = new Controller(python, ['-m', 'gojax', 'gtp', ...engineArgs])
  engine.start()
  const send = (name, args = [], subscriber) => engine.sendCommand({name, args}, subscriber)
  const result = {}
  result.name = (await send('name')).content
  result.version = (await send('version')).content
  await send('boardsize', ['9'])
  await send('clear_board')
  await send('play', ['B', 'E5'])
  const lines = []
  let stop
  const stopped = new Promise(resolve => (stop = resolve))
  const analysis = send('lz-analyze', ['W', '10'], ({line}) => {
    if (line.startsWith('info')) {
      lines.push(line)
      stop()
    }
  })
  await stopped
  result.nextCommand = (await send('name')).content  // a new command ends the stream, as in Sabaki
  result.analysisEnded = !(await analysis).error
  result.analysis = parseAnalysis(lines[0])
  result.genmove = (await send('genmove', ['W'])).content
  result.sgf = (await send('printsgf')).content
  await engine.stop()
  console.log(JSON.stringify(result))
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
