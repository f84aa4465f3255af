// PubSubBatch: the messages one worker publishes, during one loop turn, to the subscribers that
// live on one other worker, packed so that the hand-over is one mailbox item and a few buffers
// however many messages there are (doc/pubsub.md, "Costs"). Channel names, payloads and pattern
// names are copied once into one byte buffer; each message lists its receivers (client ids, by
// channel or by pattern) contiguously. Messages keep the order they were added in.
//
// Thread safety: none; filled on the publishing worker, then handed over whole and read on the
// home worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pubsub/pubsub_client.h"

namespace lavik {

class PubSubBatch {
 public:
  // Starts a message; the receivers added next belong to it.
  void Begin(PubSubKind kind, std::string_view channel, std::string_view payload) {
    last_pattern_ = nullptr;
    Message m{kind, bytes_.size(), channel.size(), 0, payload.size(), receivers_.size(), 0};
    bytes_.append(channel);
    m.payload = bytes_.size();
    bytes_.append(payload);
    messages_.push_back(m);
  }
  // A subscriber of the message's channel (or shard channel).
  void AddDirect(uint64_t id) {
    receivers_.push_back(Receiver{id, 0, 0, false});
    ++messages_.back().receivers;
  }
  // A subscriber through `pattern`. Receivers of one pattern are added one after another, so the
  // name is stored once per (message, pattern) when callers pass the same string object.
  void AddMatched(uint64_t id, const std::string& pattern) {
    if (last_pattern_ != &pattern) {
      last_pattern_ = &pattern;
      last_pattern_at_ = bytes_.size();
      bytes_.append(pattern);
    }
    receivers_.push_back(Receiver{id, last_pattern_at_, pattern.size(), true});
    ++messages_.back().receivers;
  }

  // Calls fn(id, kind, pattern, channel, payload) for every receiver of every message, in order;
  // kind is kPattern (and pattern its name) for a receiver by pattern, else the message's kind.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Message& m : messages_) {
      const std::string_view channel(bytes_.data() + m.channel, m.channel_len);
      const std::string_view payload(bytes_.data() + m.payload, m.payload_len);
      for (size_t i = m.first_receiver; i < m.first_receiver + m.receivers; ++i) {
        const Receiver& r = receivers_[i];
        if (r.by_pattern) {
          fn(r.id, PubSubKind::kPattern, std::string_view(bytes_.data() + r.pattern, r.pattern_len),
             channel, payload);
        } else {
          fn(r.id, m.kind, std::string_view(), channel, payload);
        }
      }
    }
  }

  bool empty() const { return messages_.empty(); }
  size_t messages() const { return messages_.size(); }
  // Bytes held, roughly: what bounds a batch before it is handed over early.
  size_t footprint() const {
    return bytes_.size() + receivers_.size() * sizeof(Receiver) +
           messages_.size() * sizeof(Message);
  }
  // Empties the batch, keeping its buffers for reuse.
  void Clear() {
    bytes_.clear();
    messages_.clear();
    receivers_.clear();
    last_pattern_ = nullptr;
  }

 private:
  struct Message {
    PubSubKind kind;
    size_t channel, channel_len;  // offsets into bytes_
    size_t payload, payload_len;
    size_t first_receiver, receivers;  // a range of receivers_
  };
  struct Receiver {
    uint64_t id;
    size_t pattern, pattern_len;  // offsets into bytes_ (by_pattern only)
    bool by_pattern;
  };

  std::string bytes_;
  std::vector<Message> messages_;
  std::vector<Receiver> receivers_;
  const std::string* last_pattern_ = nullptr;  // identity of the pattern stored last
  size_t last_pattern_at_ = 0;
};

}  // namespace lavik
