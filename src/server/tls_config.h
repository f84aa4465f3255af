// The tls-* configuration parameters turned into the TLS context client connections use: at
// start-up and on CONFIG SET (a reload for new connections, as Redis does; connections already
// open keep the context they were accepted with).
//
// Thread safety: the functions read the registry and must run where the registry may be used
// (start-up, or inside ConfigRegistry::Set under the server's config mutex).
#pragma once

#include "config/config_registry.h"
#include "net/tls.h"

namespace lavik {

// The settings the registry's tls-* values describe.
TlsSettings TlsSettingsFrom(const ConfigRegistry& registry);
// tls-port (0: no TLS listener).
int TlsPortFrom(const ConfigRegistry& registry);

// CONFIG SET hooks. When TLS is on (slot holds a context), a change to a parameter that shapes
// the context rebuilds it from the registry and swaps it into slot; one that fails to build
// refuses the SET with Redis's error and logs why. tls-port is refused: the listener is bound
// once at start-up.
void InstallTlsConfigHooks(ConfigRegistry* registry, TlsContextSlot* slot);

}  // namespace lavik
