-- wrk script: requests pipelined DEPTH to a write, so that wrk spends a
-- small share of a core per request and a server's loops can use the rest
-- (on two cores an unpipelined wrk takes about one of them). Like wrk's own
-- scripts/pipeline.lua; every response counts as one request.
--
--   wrk ... -s pipeline.lua URL -- DEPTH get|post [own-db]
--
-- get:    GET URL's path.
-- post:   POST a small document (server-generated id) to URL's path.
-- own-db: run with one connection per wrk thread (-t = -c): thread k posts
--         to PATH-k (k from 0), a database of its own, so connections
--         share no database's write path.
local threads = 0

function setup(thread)
  thread:set("thread_index", threads)
  threads = threads + 1
end

function init(args)
  local depth = tonumber(args[1]) or 16
  local method = args[2] == "post" and "POST" or "GET"
  local path = wrk.path
  if args[3] == "own-db" then path = path .. "-" .. thread_index end
  local body, headers = nil, {}
  if method == "POST" then
    body = '{"type":"bench","value":42,"tags":["a","b"]}'
    headers["Content-Type"] = "application/json"
  end
  local batch = {}
  for i = 1, depth do batch[i] = wrk.format(method, path, headers, body) end
  pipelined = table.concat(batch)
end

function request()
  return pipelined
end
