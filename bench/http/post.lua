-- wrk script: small-document POSTs (server-generated ids).
wrk.method = "POST"
wrk.body = '{"type":"bench","value":42,"tags":["a","b"]}'
wrk.headers["Content-Type"] = "application/json"
