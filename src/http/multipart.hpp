// The file of a multipart/form-data upload (RFC 7578), as the console and LangBot's clients send
// one: the first part with a filename, else the part named "file". Views into the request body.
//   auto file = UploadedFile(req);        // kInvalidArgument: not multipart, no file part
//   service.Save(file->filename, file->bytes);
#pragma once

#include <string>
#include <string_view>

#include "http/request.hpp"
#include "util/error.hpp"

namespace sb::http {

struct FormFile {
  std::string filename;    // from Content-Disposition (filename*=UTF-8'' preferred); may be ""
  std::string_view bytes;  // into the request's body
};

util::Result<FormFile> UploadedFile(const Request& req);

}  // namespace sb::http
