// What siwx-wire-peer expects back from siwx, and the judgement of what
// came back. The responder's stream is parsed by the protocol core's RX
// parser, so a reply that is not a well-formed FPDU stream fails too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpdu.h"

extern "C" {
#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>
}

namespace wirepeer {

struct Expect {
    enum class Kind { kTerminate, kAtomicResponse };
    Kind kind = Kind::kTerminate;
    // Terminate: the cause, and the DDP header and DDP segment length it
    // must echo (HdrCt M and D; RFC 5040 section 7.1 and figure 10,
    // RFC 7306 section 8.1). An empty @echo_ddp means no headers (LLP
    // errors). A refused Read Request is echoed too (HdrCt R, rule 3).
    siwx_term cause{};
    Bytes echo_ddp;
    uint16_t seg_len = 0;
    Bytes echo_rdma;
    // Atomic Response (RFC 7306 section 5.2.2).
    uint32_t req_id = 0;
    uint64_t orig = 0;
};

std::string Describe(const Expect& e);
std::string DescribeTerm(siwx_term t);

// Feeds the responder's byte stream to the core's parser and keeps every
// complete message (all our cases draw single-segment replies).
class ReplyReader {
  public:
    explicit ReplyReader(bool crc_on);
    void Feed(const uint8_t* p, size_t n);
    const std::vector<siwx_rx_seg>& messages() const { return msgs_; }
    bool broken() const { return broken_; }
    siwx_term parse_error() const { return rx_.term; }

  private:
    siwx_rx rx_{};
    std::vector<siwx_rx_seg> msgs_;
    bool broken_ = false;
};

// Empty when @m is the expected reply, else why not.
std::string Judge(const Expect& e, const siwx_rx_seg& m);
// A one-line description of a received message.
std::string Describe(const siwx_rx_seg& m);

}  // namespace wirepeer
