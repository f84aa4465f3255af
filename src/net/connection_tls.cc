// The TLS half of Connection: kept apart so the plain path in connection.cc reads as before.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "net/connection.h"
#include "net/tls.h"

namespace lavik {

bool Connection::TlsReceived(size_t n) {
  bool ok = tls_->Feed(tls_->recv_buffer(), n);
  long got = 0;
  while (ok) {
    // Everything the session can decrypt now comes out now: plaintext left inside the SSL
    // object would not be looked at again until more ciphertext arrived.
    if (in_cap_ - in_len_ < kReadChunk) {
      size_t cap = std::max(in_cap_ * 2, in_len_ + kReadChunk);
      char* grown = static_cast<char*>(std::realloc(in_, cap));
      if (grown == nullptr) {
        Abort();
        return false;
      }
      in_ = grown;
      in_cap_ = cap;
    }
    got = tls_->ReadPlain(in_ + in_len_, in_cap_ - in_len_);
    if (got <= 0) break;
    in_len_ += static_cast<size_t>(got);
  }
  // Handshake messages, session tickets or an alert to send.
  if (tls_->has_output()) MarkDirty();
  if (ok && got == 0) return true;
  if (tls_->failed()) {
    TlsLog("TLS error with client " + peer_ + ": " + tls_->error());
    Abort();  // the alert, if any, still goes out: Flush seals an empty output
    return false;
  }
  // close_notify: like a TCP EOF, answer what was already read, then close.
  eof_ = true;
  ProcessInput();
  CloseAfterReply();
  return false;
}

std::unique_ptr<TlsSession> Connection::DetachTls(std::string* rest) {
  if (tls_ == nullptr || recv_inflight_ || send_inflight_ || pending_) return nullptr;
  // The request being handled ends at consumed(); what follows it is the new owner's.
  const size_t end = in_start_ + parser_.consumed();
  rest->assign(in_ + end, in_len_ - end);
  in_len_ = end;
  detached_ = true;
  recv_op_.complete = &Connection::OnHangup;
  return std::move(tls_);
}

void Connection::OnHangup(IoOp* op, int res, uint32_t) {
  Connection* c = static_cast<Op*>(op)->conn;
  c->recv_inflight_ = false;
  if (c->closed_) {
    c->MaybeFinish();
    return;
  }
  if (res == -EINTR || res == -EAGAIN) {
    c->ArmRecv();
    return;
  }
  c->eof_ = true;
  if (!c->pending_) c->CloseAfterReply();
}

void Connection::TlsSeal() {
  if (!out_.empty()) {
    bool ok = tls_->WritePlain(out_);
    out_.clear();
    if (!ok) {
      TlsLog("TLS error with client " + peer_ + ": " + tls_->error());
      closing_ = true;
    }
  }
  tls_->TakeOutput(&out_);
}

}  // namespace lavik
