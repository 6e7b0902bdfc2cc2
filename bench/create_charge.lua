-- wrk script: POST /api/v1/charge with a fresh correlationID per request.
-- Environment: APP_ID (Authorization header), RUN (makes ids unique across runs).
local threads = {}
local next_id = 1

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end

function init(args)
  n = 0
  appid = os.getenv("APP_ID")
  run = os.getenv("RUN") or "0"
end

function request()
  n = n + 1
  local body = string.format('{"correlationID":"load-%s-%d-%d","value":1990,"comment":"Pedido"}', run, tid, n)
  return wrk.format("POST", "/api/v1/charge", {["Authorization"] = appid, ["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
  end
end
