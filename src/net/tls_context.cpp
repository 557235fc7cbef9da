#include "net/tls_context.hpp"

#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <fstream>

namespace sb::net {

namespace ssl = boost::asio::ssl;

TlsClientContext::TlsClientContext(const HttpClientOptions& options)
    : verify_(options.verify_tls), ca_file_(options.ca_file) {
  if (!ca_file_.empty() && !std::ifstream(ca_file_))
    init_error_ = "cannot read ca_file " + ca_file_;
}

ssl::context& TlsClientContext::Get() {
  std::call_once(once_, [this] {
    ctx_.emplace(ssl::context::tls_client);
    boost::system::error_code ec;
    ctx_->set_default_verify_paths(ec);
    if (!ca_file_.empty()) ctx_->load_verify_file(ca_file_, ec);
    ctx_->set_verify_mode(verify_ ? ssl::verify_peer : ssl::verify_none);
  });
  return *ctx_;
}

void TlsClientContext::PrepareConnection(SSL* ssl, const std::string& host) const {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  const bool ip = !ec;
  if (!ip) SSL_set_tlsext_host_name(ssl, host.c_str());
  if (!verify_) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    SSL_set1_host(ssl, host.c_str());
  }
}

}  // namespace sb::net
