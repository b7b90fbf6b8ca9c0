-- wrk script: small-document POSTs (server-generated ids) to databases
-- bench-0 .. bench-9 in turn, so that concurrent POSTs seldom meet in one
-- database's write path: what the server's loops scale to when storage does
-- not serialize them (post.lua's single database does).
local n = 0
local body = '{"type":"bench","value":42,"tags":["a","b"]}'
local headers = { ["Content-Type"] = "application/json" }

request = function()
  local path = "/bench-" .. (n % 10)
  n = n + 1
  return wrk.format("POST", path, headers, body)
end
