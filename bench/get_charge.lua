-- wrk script: GET /api/v1/charge/<CHARGE_ID>. Environment: APP_ID, CHARGE_ID.
function init(args)
  appid = os.getenv("APP_ID")
  path = "/api/v1/charge/" .. os.getenv("CHARGE_ID")
end

function request()
  return wrk.format("GET", path, {["Authorization"] = appid})
end

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
  end
end
