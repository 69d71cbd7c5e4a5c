import { FuzzServer } from './runner.js'
import { sendHttp } from './transport.js'
import net from 'node:net'
const server = await FuzzServer.start()
const k = server.keys.valid
for (const size of [100, 16383]) for (const q of ['?limit=-1', '']) {
  try {
    const r = await sendHttp({ port: server.port, localAddress: '127.0.0.9', method: 'HEAD', path: '/v1/pets' + q, headers: [['authorization', `Bearer ${k}`], ['content-type', 'application/octet-stream']], body: Buffer.alloc(size, 0x20), chunked: true, timeoutMs: 3000 })
    console.log(size, q, r.status, r.headers.connection)
  } catch (e) { console.log(size, q, 'ERR', (e as Error).message) }
}
// raw socket, print everything node:http would send
const srv = net.createServer((s) => { let b = ''; s.on('data', (d) => { b += d.toString('latin1') }); setTimeout(() => { console.log(JSON.stringify(b.slice(0, 400))); s.destroy() }, 300) })
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
const port = (srv.address() as net.AddressInfo).port
await sendHttp({ port, localAddress: '127.0.0.9', method: 'HEAD', path: '/v1/pets', headers: [], body: Buffer.alloc(10, 0x20), chunked: true, timeoutMs: 1000 }).catch((e) => console.log((e as Error).message))
srv.close()
await server.close()
