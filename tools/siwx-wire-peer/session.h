// One TCP connection of siwx-wire-peer to a siwx listener, with the MPA
// Request/Reply exchange (RFC 5044 section 7.1, RFC 6581) done by the
// protocol core's frame codec and negotiation.
#pragma once

#include <cstdint>
#include <string>

#include "fpdu.h"

extern "C" {
#include <siwx/proto/mpa_nego.h>
}

namespace wirepeer {

class Session {
  public:
    Session() = default;
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    bool Connect(const std::string& host, uint16_t port, std::string* err);
    // Send an MPA Request (revision 2, CRC, IRD/ORD @rd) with @pd and read
    // the Reply; on success conn() holds what was agreed, @reply_pd the
    // responder's private data.
    bool Mpa(const Bytes& pd, uint16_t rd, Bytes* reply_pd, std::string* err);
    bool Send(const Bytes& b, std::string* err);
    // Up to @cap octets within @timeout_ms: > 0 read, 0 end of stream,
    // -1 timeout, -2 error (@err says which).
    long Recv(uint8_t* buf, size_t cap, int timeout_ms, std::string* err);

    const siwx_mpa_conn& conn() const { return conn_; }

  private:
    bool RecvExact(uint8_t* buf, size_t n, int timeout_ms, std::string* err);

    int fd_ = -1;
    siwx_mpa_conn conn_{};
};

}  // namespace wirepeer
