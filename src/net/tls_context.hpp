// The OpenSSL client context shared by the HTTP client and the WebSocket transport: the system CA
// store plus HttpClientOptions::ca_file, and per-connection SNI and host-name checks. Internal to
// net/ (pulls in Asio's SSL headers).
//   TlsClientContext tls(options);                  // cheap; the store loads on first use
//   if (!tls.init_error().empty()) ...               // ca_file unreadable
//   ssl_stream stream(ex, tls.Get()); tls.PrepareConnection(stream.native_handle(), host);
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <mutex>
#include <optional>
#include <string>

#include "net/http_client.hpp"

namespace sb::net {

// Thread-safe.
class TlsClientContext {
 public:
  explicit TlsClientContext(const HttpClientOptions& options);

  // Non-empty when ca_file cannot be read; every TLS connection should then fail with it.
  const std::string& init_error() const { return init_error_; }

  // Built on first use: loading the system's CA store costs a few MB.
  boost::asio::ssl::context& Get();

  // Sets SNI (never for an IP literal, RFC 6066) and, when verifying, the name or address the
  // certificate must match. Call before the handshake.
  void PrepareConnection(SSL* ssl, const std::string& host) const;

 private:
  const bool verify_;
  const std::string ca_file_;
  std::string init_error_;
  std::once_flag once_;
  std::optional<boost::asio::ssl::context> ctx_;  // set once by Get()
};

}  // namespace sb::net
