import net from 'node:net'
import { FuzzServer } from './runner.js'
const server = await FuzzServer.start()
const send = (data: Buffer) => new Promise<string>((resolve) => {
  const s = net.connect(server.port, '127.0.0.1'); let buf = ''
  s.on('data', (d) => (buf += d.toString('latin1'))); s.on('close', () => resolve(buf)); s.on('error', () => {})
  s.write(data); setTimeout(() => s.destroy(), 800)
})
const k = server.keys.valid
const body = Buffer.alloc(16383, 0x20)
for (const [method, q] of [['HEAD', '?limit=-1'], ['HEAD', ''], ['GET', '?limit=-1'], ['GET', '']]) {
  const head = `${method} /v1/pets${q} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`
  const chunk = Buffer.concat([Buffer.from(head), Buffer.from(body.length.toString(16) + '\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])
  const out = await send(chunk)
  console.log('>>>', method, q, '\n', out.replace(/\r\n/g, '\n').split('\n').filter(l => /^HTTP|^connection|^content-length|^\{/i.test(l)).join('\n'))
}
await server.close()
