// The response envelope of contract §1 and the single mapping from ErrorCode to HTTP status.
//   return JsonOk(data);                       // 200 {"code":0,"msg":"ok","data":...}
//   return JsonError(err, req.request_id);     // status from HttpStatusFor(err.code)
#pragma once

#include <string_view>

#include "http/request.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::http {

int HttpStatusFor(util::ErrorCode code);

Response JsonOk(const util::Json& data);
Response JsonOkNoData();
// Internal errors answer with a generic sentence and the request id; the detail goes to the log.
Response JsonError(const util::Error& error, std::string_view request_id);

}  // namespace sb::http
