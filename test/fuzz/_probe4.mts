import net from 'node:net'
import fc from 'fast-check'
import { FuzzServer } from './runner.js'
import { sendHttp } from './transport.js'
const server = await FuzzServer.start()
const k = server.keys.valid
for (const text of ['{"name":"\\ud800","categoryId":1}', '{"name":"a\\u0000b","categoryId":1}', '{"name":"\\udfff\\ud800x","categoryId":1}']) {
  const r = await sendHttp({ port: server.port, localAddress: '127.0.0.1', method: 'POST', path: '/v1/pets', headers: [['authorization', `Bearer ${k}`], ['content-type', 'application/json']], body: Buffer.from(text), timeoutMs: 3000 })
  const g = await sendHttp({ port: server.port, localAddress: '127.0.0.1', method: 'GET', path: r.headers.location ?? '/', headers: [['authorization', `Bearer ${k}`]], timeoutMs: 3000 })
  console.log(text, r.status, JSON.stringify(r.body.toString('latin1')), g.status, JSON.stringify(g.body.toString('latin1')))
}
console.log(fc.sample(fc.string({ unit: 'binary', maxLength: 3 }), 200).filter((s) => /[\ud800-\udfff]/.test(s) && !s.isWellFormed()).length)
// pipelining: a valid request followed by garbage in one write
const body = '{"name":"pipelined","categoryId":1}'
const data = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}GARBAGE\r\n\r\n`
const out = await new Promise<string>((resolve) => { const s = net.connect(server.port, '127.0.0.1'); let b = ''; s.on('data', (d) => (b += d)); s.on('close', () => resolve(b)); s.on('error', () => {}); s.write(data); setTimeout(() => s.destroy(), 1000) })
console.log(out.split('\r\n').filter((l) => /^HTTP|^\{/.test(l)))
const data2 = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\n\r\nGET /v1/pets?limit=2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\n\r\n`
const out2 = await new Promise<string>((resolve) => { const s = net.connect(server.port, '127.0.0.1'); let b = ''; s.on('data', (d) => (b += d)); s.on('close', () => resolve(b)); s.on('error', () => {}); s.write(data2); setTimeout(() => s.destroy(), 1000) })
console.log(out2.split('\r\n').filter((l) => /^HTTP|^\[/.test(l)))
await server.close()
