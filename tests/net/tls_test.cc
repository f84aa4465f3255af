// TlsSession against a real OpenSSL client, all in memory: the test moves the bytes between the
// client's BIOs and the session as the connection's recv and send would.
#include "net/tls.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace lavik {
namespace {

namespace fs = std::filesystem;

struct KeyCert {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~KeyCert() {
    EVP_PKEY_free(key);
    X509_free(cert);
  }
};

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  ASSERT_NE(ext, nullptr);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A P-256 key and a certificate for it; self-signed when issuer is null.
void Make(const char* cn, const KeyCert* issuer, bool ca, KeyCert* out) {
  out->key = EVP_EC_gen("P-256");
  ASSERT_NE(out->key, nullptr);
  out->cert = X509_new();
  X509_set_version(out->cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(out->cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(out->cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(out->cert), 3600);
  X509_set_pubkey(out->cert, out->key);
  X509_NAME* name = X509_get_subject_name(out->cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* issuer_cert = issuer ? issuer->cert : out->cert;
  X509_set_issuer_name(out->cert, X509_get_subject_name(issuer_cert));
  AddExtension(out->cert, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (!ca) AddExtension(out->cert, issuer_cert, NID_subject_alt_name, "IP:127.0.0.1");
  ASSERT_GT(X509_sign(out->cert, issuer ? issuer->key : out->key, EVP_sha256()), 0);
}

void WritePem(const fs::path& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  if (cert != nullptr) PEM_write_X509(f, cert);
  if (key != nullptr) PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lavik-tls-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    Make("Test CA", nullptr, true, &ca_);
    Make("127.0.0.1", &ca_, false, &server_);
    Make("client", &ca_, false, &client_);
    Make("Rogue CA", nullptr, true, &rogue_ca_);
    Make("rogue", &rogue_ca_, false, &rogue_);
    WritePem(dir_ / "ca.crt", ca_.cert, nullptr);
    WritePem(dir_ / "server.crt", server_.cert, nullptr);
    WritePem(dir_ / "server.key", nullptr, server_.key);
    settings_.cert_file = dir_ / "server.crt";
    settings_.key_file = dir_ / "server.key";
    settings_.ca_cert_file = dir_ / "ca.crt";
  }
  void TearDown() override {
    SSL_free(client_ssl_);
    SSL_CTX_free(client_ctx_);
    fs::remove_all(dir_);
  }

  // A client trusting our CA, presenting `cert` if given.
  void StartClient(const KeyCert* cert) {
    client_ctx_ = SSL_CTX_new(TLS_client_method());
    X509_STORE_add_cert(SSL_CTX_get_cert_store(client_ctx_), ca_.cert);
    SSL_CTX_set_verify(client_ctx_, SSL_VERIFY_PEER, nullptr);
    if (cert != nullptr) {
      SSL_CTX_use_certificate(client_ctx_, cert->cert);
      SSL_CTX_use_PrivateKey(client_ctx_, cert->key);
    }
    client_ssl_ = SSL_new(client_ctx_);
    client_in_ = BIO_new(BIO_s_mem());
    client_out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(client_in_, -1);
    SSL_set_bio(client_ssl_, client_in_, client_out_);
    SSL_set_connect_state(client_ssl_);
  }

  // Moves bytes both ways until nothing moves; the server's plaintext lands in server_got_.
  void Pump() {
    for (int round = 0; round < 100; ++round) {
      bool moved = false;
      SSL_do_handshake(client_ssl_);
      char buf[16384];
      int n;
      while ((n = BIO_read(client_out_, buf, sizeof(buf))) > 0) {
        moved = true;
        session_->Feed(buf, static_cast<size_t>(n));
      }
      long got;
      while ((got = session_->ReadPlain(buf, sizeof(buf))) > 0) server_got_.append(buf, got);
      std::string out;
      session_->TakeOutput(&out);
      if (!out.empty()) {
        moved = true;
        BIO_write(client_in_, out.data(), static_cast<int>(out.size()));
      }
      size_t cn = 0;
      while (SSL_read_ex(client_ssl_, buf, sizeof(buf), &cn) == 1) client_got_.append(buf, cn);
      if (!moved) return;
    }
  }

  void Connect(const KeyCert* client_cert) {
    auto ctx = TlsContext::Create(settings_, &error_);
    ASSERT_NE(ctx, nullptr) << error_;
    session_ = ctx->NewSession();
    ASSERT_NE(session_, nullptr);
    StartClient(client_cert);
    Pump();
  }

  fs::path dir_;
  KeyCert ca_, server_, client_, rogue_ca_, rogue_;
  TlsSettings settings_;
  std::string error_;
  std::unique_ptr<TlsSession> session_;
  SSL_CTX* client_ctx_ = nullptr;
  SSL* client_ssl_ = nullptr;
  BIO* client_in_ = nullptr;
  BIO* client_out_ = nullptr;
  std::string server_got_;
  std::string client_got_;
};

TEST_F(TlsTest, HandshakeAndDataBothWays) {
  Connect(&client_);
  ASSERT_TRUE(session_->handshake_done()) << session_->error();
  ASSERT_TRUE(SSL_is_init_finished(client_ssl_));

  ASSERT_EQ(SSL_write(client_ssl_, "*1\r\n$4\r\nPING\r\n", 14), 14);
  Pump();
  EXPECT_EQ(server_got_, "*1\r\n$4\r\nPING\r\n");
  ASSERT_TRUE(session_->WritePlain("+PONG\r\n"));
  Pump();
  EXPECT_EQ(client_got_, "+PONG\r\n");

  // Larger than any record, both ways.
  std::string big(1 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i % 26);
  server_got_.clear();
  client_got_.clear();
  ASSERT_EQ(SSL_write(client_ssl_, big.data(), static_cast<int>(big.size())),
            static_cast<int>(big.size()));
  Pump();
  EXPECT_EQ(server_got_, big);
  ASSERT_TRUE(session_->WritePlain(big));
  Pump();
  EXPECT_EQ(client_got_, big);
  EXPECT_FALSE(session_->failed());
}

TEST_F(TlsTest, OutputWrittenBeforeTheHandshakeWaitsForIt) {
  auto ctx = TlsContext::Create(settings_, &error_);
  ASSERT_NE(ctx, nullptr) << error_;
  session_ = ctx->NewSession();
  ASSERT_TRUE(session_->WritePlain("-ERR early\r\n"));
  EXPECT_FALSE(session_->has_output());
  StartClient(&client_);
  Pump();
  EXPECT_EQ(client_got_, "-ERR early\r\n");
}

TEST_F(TlsTest, ClientWithoutCertificateIsRefused) {
  Connect(nullptr);
  EXPECT_TRUE(session_->failed());
  EXPECT_FALSE(session_->error().empty());
}

TEST_F(TlsTest, ClientWithCertificateFromAnotherCaIsRefused) {
  Connect(&rogue_);
  EXPECT_TRUE(session_->failed());
  EXPECT_NE(session_->error().find("certificate"), std::string::npos) << session_->error();
}

TEST_F(TlsTest, OptionalAcceptsNoCertificateButNotABadOne) {
  settings_.auth_clients = TlsSettings::AuthClients::kOptional;
  Connect(nullptr);
  EXPECT_TRUE(session_->handshake_done()) << session_->error();
  SSL_free(client_ssl_);
  SSL_CTX_free(client_ctx_);
  client_ssl_ = nullptr;
  client_ctx_ = nullptr;
  Connect(&rogue_);
  EXPECT_TRUE(session_->failed());
}

TEST_F(TlsTest, NoClientAuthAcceptsAnyClient) {
  settings_.auth_clients = TlsSettings::AuthClients::kNo;
  settings_.ca_cert_file.clear();  // not needed then, as in Redis
  Connect(&rogue_);
  EXPECT_TRUE(session_->handshake_done()) << session_->error();
}

TEST_F(TlsTest, PlainTextIsRefused) {
  auto ctx = TlsContext::Create(settings_, &error_);
  ASSERT_NE(ctx, nullptr);
  session_ = ctx->NewSession();
  const char kPing[] = "*1\r\n$4\r\nPING\r\n";
  EXPECT_FALSE(session_->Feed(kPing, sizeof(kPing) - 1));
  EXPECT_TRUE(session_->failed());
  char buf[64];
  EXPECT_EQ(session_->ReadPlain(buf, sizeof(buf)), -1);
}

TEST_F(TlsTest, BadSettingsAreReportedAsRedisDoes) {
  TlsSettings s = settings_;
  s.cert_file = (dir_ / "missing.crt").string();
  EXPECT_EQ(TlsContext::Create(s, &error_), nullptr);
  EXPECT_EQ(error_.rfind("Failed to load certificate: " + s.cert_file + ": ", 0), 0u) << error_;

  s = settings_;
  WritePem(dir_ / "client.key", nullptr, client_.key);
  s.key_file = (dir_ / "client.key").string();  // does not match the certificate
  EXPECT_EQ(TlsContext::Create(s, &error_), nullptr);
  EXPECT_EQ(error_.rfind("Failed to load private key: ", 0), 0u) << error_;

  s = settings_;
  s.cert_file.clear();
  EXPECT_EQ(TlsContext::Create(s, &error_), nullptr);
  EXPECT_EQ(error_, "No tls-cert-file configured!");

  s = settings_;
  s.ca_cert_file.clear();
  EXPECT_EQ(TlsContext::Create(s, &error_), nullptr);
  EXPECT_EQ(error_.rfind("Either tls-ca-cert-file or tls-ca-cert-dir", 0), 0u) << error_;

  s = settings_;
  s.protocols = "TLSv1.2 SSLv3";
  EXPECT_EQ(TlsContext::Create(s, &error_), nullptr);
  EXPECT_EQ(error_.rfind("Invalid tls-protocols specified.", 0), 0u) << error_;

  s = settings_;
  s.protocols = "tlsv1.3";
  s.ciphersuites = "TLS_AES_128_GCM_SHA256";
  s.prefer_server_ciphers = true;
  s.session_caching = false;
  EXPECT_NE(TlsContext::Create(s, &error_), nullptr) << error_;
}

TEST_F(TlsTest, SlotSwapKeepsLiveSessions) {
  TlsContextSlot slot;
  EXPECT_FALSE(slot.enabled());
  auto ctx = TlsContext::Create(settings_, &error_);
  ASSERT_NE(ctx, nullptr);
  slot.Set(ctx);
  session_ = slot.Get()->NewSession();
  ctx.reset();
  slot.Set(TlsContext::Create(settings_, &error_));  // the old context now lives in session_
  StartClient(&client_);
  Pump();
  EXPECT_TRUE(session_->handshake_done()) << session_->error();
}

}  // namespace
}  // namespace lavik
