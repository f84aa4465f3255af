#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <strings.h>

#include <atomic>
#include <sstream>

namespace lavik {
namespace {

std::atomic<TlsLogSink> log_sink{nullptr};

// tls-protocols: a space-separated subset of Redis's four names, any case. Writes the
// SSL_OP_NO_* options that switch off the protocols not named.
bool ProtocolOptions(const std::string& text, uint64_t* options) {
  static constexpr struct {
    const char* name;
    uint64_t no_option;
  } kProtocols[] = {{"tlsv1", SSL_OP_NO_TLSv1},
                    {"tlsv1.1", SSL_OP_NO_TLSv1_1},
                    {"tlsv1.2", SSL_OP_NO_TLSv1_2},
                    {"tlsv1.3", SSL_OP_NO_TLSv1_3}};
  uint64_t all = 0;
  for (const auto& p : kProtocols) all |= p.no_option;
  if (text.empty()) {  // Redis's default: TLSv1.2 and TLSv1.3
    *options = SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
    return true;
  }
  uint64_t enabled = 0;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    bool known = false;
    for (const auto& p : kProtocols) {
      if (strcasecmp(word.c_str(), p.name) == 0) {
        enabled |= p.no_option;
        known = true;
      }
    }
    if (!known) return false;
  }
  if (enabled == 0) return false;
  *options = all & ~enabled;
  return true;
}

// The SSL_CTX half of Create(): false + error text, the caller frees ctx.
bool Configure(SSL_CTX* ctx, const TlsSettings& s, std::string* error) {
  if (s.cert_file.empty()) {
    *error = "No tls-cert-file configured!";
    return false;
  }
  if (s.key_file.empty()) {
    *error = "No tls-key-file configured!";
    return false;
  }
  if (s.auth_clients != TlsSettings::AuthClients::kNo && s.ca_cert_file.empty() &&
      s.ca_cert_dir.empty()) {
    *error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-auth-clients is "
        "enabled!";
    return false;
  }
  uint64_t protocol_options = 0;
  if (!ProtocolOptions(s.protocols, &protocol_options)) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
        "'TLSv1.3'.";
    return false;
  }
  // OpenSSL 3 refuses client-initiated renegotiation by default, as Redis wants.
  SSL_CTX_set_options(ctx,
                      SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | protocol_options);
  if (s.prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (s.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, s.session_cache_size);
    SSL_CTX_set_timeout(ctx, s.session_cache_timeout);
    static const unsigned char kSessionIdContext[] = "lavik";
    SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
  }

  // The password callback's user data is only read while the key file loads.
  std::string pass = s.key_file_pass;
  SSL_CTX_set_default_passwd_cb_userdata(ctx, pass.empty() ? nullptr : pass.data());
  if (SSL_CTX_use_certificate_chain_file(ctx, s.cert_file.c_str()) <= 0) {
    *error = "Failed to load certificate: " + s.cert_file + ": " + TakeOpenSslError("unknown");
    return false;
  }
  bool key_ok = SSL_CTX_use_PrivateKey_file(ctx, s.key_file.c_str(), SSL_FILETYPE_PEM) > 0 &&
                SSL_CTX_check_private_key(ctx) > 0;
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
  if (!key_ok) {
    *error = "Failed to load private key: " + s.key_file + ": " + TakeOpenSslError("unknown");
    return false;
  }
  if ((!s.ca_cert_file.empty() || !s.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, s.ca_cert_file.empty() ? nullptr : s.ca_cert_file.c_str(),
                                    s.ca_cert_dir.empty() ? nullptr : s.ca_cert_dir.c_str()) <= 0) {
    *error = "Failed to configure CA certificate(s) file/directory: " + TakeOpenSslError("unknown");
    return false;
  }
  if (!s.dh_params_file.empty()) {
    BIO* bio = BIO_new_file(s.dh_params_file.c_str(), "r");
    EVP_PKEY* dh = bio != nullptr ? PEM_read_bio_Parameters(bio, nullptr) : nullptr;
    BIO_free(bio);
    if (dh == nullptr || SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) {
      EVP_PKEY_free(dh);
      *error = "Failed to load " + s.dh_params_file + ": " + TakeOpenSslError("unknown");
      return false;
    }
  } else {
    SSL_CTX_set_dh_auto(ctx, 1);
  }
  if (!s.ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, s.ciphers.c_str())) {
    *error = "Failed to configure ciphers: " + s.ciphers;
    ERR_clear_error();
    return false;
  }
  if (!s.ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, s.ciphersuites.c_str())) {
    *error = "Failed to configure ciphersuites: " + s.ciphersuites;
    ERR_clear_error();
    return false;
  }
  switch (s.auth_clients) {
    case TlsSettings::AuthClients::kNo:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case TlsSettings::AuthClients::kOptional:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case TlsSettings::AuthClients::kYes:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return true;
}

}  // namespace

void SetTlsLogSink(TlsLogSink sink) { log_sink.store(sink); }

void TlsLog(std::string_view message) {
  TlsLogSink sink = log_sink.load(std::memory_order_relaxed);
  if (sink != nullptr) sink(message);
}

std::string TakeOpenSslError(std::string_view fallback) {
  std::string text;
  unsigned long code;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text.empty() ? std::string(fallback) : text;
}

// ---- TlsContext -------------------------------------------------------------------

std::shared_ptr<TlsContext> TlsContext::Create(const TlsSettings& settings, std::string* error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    *error = "SSL_CTX_new: " + TakeOpenSslError("out of memory");
    return nullptr;
  }
  if (!Configure(ctx, settings, error)) {
    SSL_CTX_free(ctx);
    return nullptr;
  }
  return std::shared_ptr<TlsContext>(new TlsContext(ctx));
}

std::shared_ptr<TlsContext> TlsContext::CreateClient(const TlsSettings& settings,
                                                     std::string* error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    *error = "SSL_CTX_new: " + TakeOpenSslError("out of memory");
    return nullptr;
  }
  TlsSettings s = settings;
  s.auth_clients = TlsSettings::AuthClients::kYes;  // the CA is needed: the server is verified
  s.session_caching = false;
  if (!Configure(ctx, s, error)) {
    SSL_CTX_free(ctx);
    return nullptr;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  return std::shared_ptr<TlsContext>(new TlsContext(ctx));
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::unique_ptr<TlsSession> TlsContext::NewSession() const { return NewSessionAs(false); }

std::unique_ptr<TlsSession> TlsContext::NewClientSession() const { return NewSessionAs(true); }

std::unique_ptr<TlsSession> TlsContext::NewSessionAs(bool client) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) {
    ERR_clear_error();
    return nullptr;
  }
  if (client) {
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(ssl);
  }
  return std::make_unique<TlsSession>(ssl);
}

void TlsContextSlot::Set(std::shared_ptr<TlsContext> ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  ctx_ = std::move(ctx);
}

std::shared_ptr<TlsContext> TlsContextSlot::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ctx_;
}

// ---- TlsSession -------------------------------------------------------------------

TlsSession::TlsSession(SSL* ssl) : ssl_(ssl), recv_buf_(new char[kRecvBufferSize]) {
  rbio_ = BIO_new(BIO_s_mem());
  wbio_ = BIO_new(BIO_s_mem());
  if (rbio_ == nullptr || wbio_ == nullptr) {
    BIO_free(rbio_);
    BIO_free(wbio_);
    rbio_ = wbio_ = nullptr;
    failed_ = true;
    error_ = "out of memory";
    return;
  }
  // An empty read BIO means "wait for more", not end of stream.
  BIO_set_mem_eof_return(rbio_, -1);
  SSL_set_bio(ssl_, rbio_, wbio_);
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::Fail(int ssl_error) {
  failed_ = true;
  long verify = SSL_get_verify_result(ssl_);
  std::string text = TakeOpenSslError(ssl_error == SSL_ERROR_SYSCALL ? "unexpected end of stream"
                                                                     : "protocol error");
  if (verify != X509_V_OK) {
    text += std::string(" (certificate: ") + X509_verify_cert_error_string(verify) + ")";
  }
  error_ = std::move(text);
}

bool TlsSession::Advance() {
  if (failed_) return false;
  if (!handshake_done_) {
    int rc = SSL_do_handshake(ssl_);
    if (rc != 1) {
      int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return true;
      Fail(err);
      return false;
    }
    handshake_done_ = true;
  }
  if (!queued_.empty()) {
    std::string data;
    data.swap(queued_);
    return WritePlain(data);
  }
  return true;
}

bool TlsSession::Feed(const char* data, size_t n) {
  if (failed_) return false;
  ERR_clear_error();
  // A memory BIO takes everything it is given (it grows).
  if (n > 0 && BIO_write(rbio_, data, static_cast<int>(n)) != static_cast<int>(n)) {
    failed_ = true;
    error_ = "out of memory";
    return false;
  }
  return Advance();
}

long TlsSession::ReadPlain(char* dst, size_t cap) {
  if (failed_ || closed_by_peer_) return -1;
  if (!handshake_done_) return 0;
  size_t got = 0;
  if (SSL_read_ex(ssl_, dst, cap, &got) == 1) return static_cast<long>(got);
  int err = SSL_get_error(ssl_, 0);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return 0;
  if (err == SSL_ERROR_ZERO_RETURN) {  // close_notify: the peer is done, as a TCP EOF
    closed_by_peer_ = true;
    return -1;
  }
  Fail(err);
  return -1;
}

bool TlsSession::WritePlain(std::string_view data) {
  if (failed_) return false;
  if (data.empty()) return true;
  if (!handshake_done_) {
    queued_.append(data);
    return true;
  }
  ERR_clear_error();
  // Without SSL_MODE_ENABLE_PARTIAL_WRITE a write into a memory BIO completes whole.
  size_t written = 0;
  if (SSL_write_ex(ssl_, data.data(), data.size(), &written) != 1 || written != data.size()) {
    Fail(SSL_get_error(ssl_, 0));
    return false;
  }
  return true;
}

bool TlsSession::has_output() const { return wbio_ != nullptr && BIO_ctrl_pending(wbio_) > 0; }

void TlsSession::TakeOutput(std::string* out) {
  if (wbio_ == nullptr) return;
  size_t pending = BIO_ctrl_pending(wbio_);
  if (pending == 0) return;
  size_t old = out->size();
  out->resize(old + pending);
  size_t got = 0;
  if (BIO_read_ex(wbio_, out->data() + old, pending, &got) != 1) got = 0;
  out->resize(old + got);
}

}  // namespace lavik
