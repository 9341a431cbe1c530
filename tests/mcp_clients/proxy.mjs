// Forwards every request to `discuss serve` with a bearer token added, for
// the MCP conformance suite, which has no way to send one. Headers (Host
// and Origin among them) pass as the client sent them. Prints its port.
//   node proxy.mjs PORT TARGET_URL TOKEN     (PORT 0: any free one)
import http from 'node:http';

const [listen, target, token] = process.argv.slice(2);
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(`${target}${req.url}`, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (e) => {
    res.writeHead(502);
    res.end(String(e));
  });
  req.pipe(upstream);
});
server.listen(Number(listen), '127.0.0.1', () => console.log(server.address().port));
