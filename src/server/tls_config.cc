#include "server/tls_config.h"

#include <cstdlib>
#include <string>

#include "base/log.h"

namespace lavik {
namespace {

std::string ValueOf(const ConfigRegistry& registry, std::string_view name) {
  const std::string* v = registry.Value(name);
  return v == nullptr ? std::string() : *v;
}

// The parameters a context is built from; tls-port, tls-replication and the rest are not.
constexpr const char* kContextParams[] = {
    "tls-cert-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-ca-cert-file",
    "tls-ca-cert-dir",
    "tls-dh-params-file",
    "tls-auth-clients",
    "tls-protocols",
    "tls-ciphers",
    "tls-ciphersuites",
    "tls-prefer-server-ciphers",
    "tls-session-caching",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
};

}  // namespace

TlsSettings TlsSettingsFrom(const ConfigRegistry& registry) {
  TlsSettings s;
  s.cert_file = ValueOf(registry, "tls-cert-file");
  s.key_file = ValueOf(registry, "tls-key-file");
  s.key_file_pass = ValueOf(registry, "tls-key-file-pass");
  s.ca_cert_file = ValueOf(registry, "tls-ca-cert-file");
  s.ca_cert_dir = ValueOf(registry, "tls-ca-cert-dir");
  s.dh_params_file = ValueOf(registry, "tls-dh-params-file");
  std::string auth = ValueOf(registry, "tls-auth-clients");
  s.auth_clients = auth == "no"         ? TlsSettings::AuthClients::kNo
                   : auth == "optional" ? TlsSettings::AuthClients::kOptional
                                        : TlsSettings::AuthClients::kYes;
  s.protocols = ValueOf(registry, "tls-protocols");
  s.ciphers = ValueOf(registry, "tls-ciphers");
  s.ciphersuites = ValueOf(registry, "tls-ciphersuites");
  s.prefer_server_ciphers = ValueOf(registry, "tls-prefer-server-ciphers") == "yes";
  s.session_caching = ValueOf(registry, "tls-session-caching") == "yes";
  s.session_cache_size =
      std::strtol(ValueOf(registry, "tls-session-cache-size").c_str(), nullptr, 10);
  s.session_cache_timeout =
      std::strtol(ValueOf(registry, "tls-session-cache-timeout").c_str(), nullptr, 10);
  return s;
}

int TlsPortFrom(const ConfigRegistry& registry) {
  return std::atoi(ValueOf(registry, "tls-port").c_str());
}

void InstallTlsConfigHooks(ConfigRegistry* registry, TlsContextSlot* slot) {
  for (const char* name : kContextParams) {
    registry->OnChange(name, [registry, slot, name](std::string_view) {
      if (!slot->enabled()) return Status::Ok();  // TLS is off: the values are only stored
      std::string error;
      std::shared_ptr<TlsContext> ctx = TlsContext::Create(TlsSettingsFrom(*registry), &error);
      if (ctx == nullptr) {
        LogWarning(error);
        LogWarning(std::string("Failed applying new configuration. Possibly related to new ") +
                   name + " setting. Restoring previous settings.");
        return Status::Error("Unable to update TLS configuration. Check server logs.");
      }
      slot->Set(std::move(ctx));
      return Status::Ok();
    });
  }
  registry->OnChange("tls-port", [](std::string_view) {
    return Status::Error("Lavik cannot change it at runtime; restart with the new value");
  });
}

}  // namespace lavik
