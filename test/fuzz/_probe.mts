import net from 'node:net'
import { FuzzServer } from './runner.js'
const server = await FuzzServer.start()
const send = (data: string) => new Promise<string>((resolve) => {
  const s = net.connect(server.port, '127.0.0.1'); let buf = ''
  s.on('data', (d) => (buf += d.toString('latin1'))); s.on('close', () => resolve(buf))
  s.write(data); setTimeout(() => s.destroy(), 500)
})
const k = server.keys.valid
for (const req of [
  `HEAD /v1/pets/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\n\r\n`,
  `HEAD /v1/pets/abc HTTP/1.1\r\nHost: x\r\n\r\n`,
  `HEAD /v1/pets?limit=-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k}\r\n\r\n`,
  `HEAD /v1/pets/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n`,
  `GET /v1/pets/${'9'.repeat(101)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":`,
]) { console.log('>>>', JSON.stringify(req.slice(0, 80))); console.log(await send(req)) }
await server.close()
