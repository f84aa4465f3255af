// Starts the Prometheus endpoint (bound earlier by Observability::BindMetrics): each scrape
// gathers a snapshot from every worker and the server's counters.
#pragma once

namespace lavik {

class Observability;
class Server;

// Once the workers run; a no-op when metrics-port is 0.
void StartMetrics(Server* server, Observability* obs);

}  // namespace lavik
