-- wrk script for bench/run.mjs.
-- Usage: wrk ... -s bench/wrk-report.lua URL -- METHOD [BODY]
-- init() only changes wrk.method/body/headers, so wrk keeps its pre-built (static) request:
-- no Lua runs per request. done() prints one machine-readable line with exact percentiles (us).

function init(args)
  local method = args[1]
  if method ~= nil and method ~= "" then
    wrk.method = method
  end
  local body = args[2]
  if body ~= nil and body ~= "" then
    wrk.body = body
    wrk.headers["Content-Type"] = "application/json"
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local p = {}
  for _, q in ipairs({ 50, 75, 90, 99, 99.9 }) do
    p[#p + 1] = string.format('"%s":%d', tostring(q), latency:percentile(q))
  end
  io.write(string.format(
    'BENCH_JSON {"durationUs":%d,"requests":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latencyUs":{"min":%d,"max":%d,"mean":%.2f,"stdev":%.2f,"percentiles":{%s}}}\n',
    summary.duration, summary.requests, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean, latency.stdev, table.concat(p, ",")))
end
