-- wrk script: each connection alternates creating a provider and deleting the one it created,
-- so the table stays small and every request is a real write.
local pending = {}
local api_key = os.getenv("SB_API_KEY")

request = function()
  local headers = { ["X-API-Key"] = api_key, ["Content-Type"] = "application/json" }
  local uuid = table.remove(pending)
  if uuid then
    return wrk.format("DELETE", "/api/v1/provider/providers/" .. uuid, headers, nil)
  end
  local body = '{"name":"bench","requester":"openai-chat-completions",' ..
               '"base_url":"https://api.openai.com/v1","api_keys":["sk-bench"]}'
  return wrk.format("POST", "/api/v1/provider/providers", headers, body)
end

response = function(status, headers, body)
  local uuid = body:match('"uuid":"([0-9a-f%-]+)"')
  if uuid then table.insert(pending, uuid) end
end
