// The verdict of siwx-wire-fuzz on what siwx sends back on one
// connection: a valid FPDU stream (the core's RX parser) of only Read
// Responses and Atomic Responses to our requests, in order (RFC 5040
// section 5.2, RFC 7306 section 4.1), and at most one Terminate, which
// only a frame that may be refused can draw and after which nothing
// follows (RFC 5040 section 6.2).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "fuzz_frames.h"
#include "reply.h"

namespace wirepeer {

class ConnJudge {
  public:
    explicit ConnJudge(bool crc_on) : reader_(crc_on) {}

    // A valid Read or Atomic Request went out: its response is owed.
    void Issued(const Request& r);
    // A frame that siwx may refuse went out: a Terminate is right from
    // now on, and responses that match no request are tolerated (a
    // mutated frame may have been a request siwx served).
    void Risky() { risky_ = true; }
    // What siwx sent; false once the stream broke a rule (see why()).
    bool Feed(const uint8_t* p, size_t n);

    size_t outstanding() const { return reads_.size() + atomics_.size(); }
    bool risky() const { return risky_; }
    bool terminated() const { return term_; }
    const siwx_rx_seg& terminate() const { return term_msg_; }
    uint64_t responses() const { return responses_; }
    const std::string& why() const { return why_; }
    // What siwx sent on this connection (its first 1 MiB), for the report.
    const Bytes& received() const { return received_; }

  private:
    bool Message(const siwx_rx_seg& m);
    bool Fail(std::string why);

    ReplyReader reader_;
    size_t seen_ = 0;
    std::deque<Request> reads_;
    std::deque<Request> atomics_;
    uint64_t read_got_ = 0;  // octets of the oldest Read's response so far
    bool risky_ = false;
    bool term_ = false;
    siwx_rx_seg term_msg_{};
    uint64_t responses_ = 0;
    std::string why_;
    Bytes received_;
};

}  // namespace wirepeer
