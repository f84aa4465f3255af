// ClientState's constructor and destructor (client/client_state.h): here, where the server
// creates and frees clients, because the state owns parts of subsystems that stand above client/
// (a MULTI queue, pub/sub subscriptions).
#include "client/client_state.h"
#include "pubsub/pubsub_client.h"
#include "tracking/tracking.h"
#include "transaction/transaction.h"

namespace lavik {

ClientState::ClientState(Connection* c) : conn(c), id(c->id()), writer(nullptr, 2) {}

ClientState::~ClientState() {
  if (on_free) on_free();
}

}  // namespace lavik
