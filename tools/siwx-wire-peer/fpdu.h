// FPDU builders of siwx-wire-peer: DDP segments with RDMAP control
// fields (RFC 5041 section 4, RFC 5040 section 4.1), RFC 7306 headers,
// MPA framing (RFC 5044 section 4) and the corruptions the hostile cases
// need. Headers come from the protocol core's encoders; the ULPDU is
// kept as bytes so that a case can break any field before framing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include <siwx/proto/rfc7306.h>
}

namespace wirepeer {

using Bytes = std::vector<uint8_t>;

// An untagged segment: DDP header (QN, MSN, MO; L set) and @body.
Bytes UntaggedUlpdu(uint8_t opcode, uint32_t qn, uint32_t msn, const Bytes& body);
// A tagged segment: DDP header (STag, TO; L set) and @payload.
Bytes TaggedUlpdu(uint8_t opcode, uint32_t stag, uint64_t to, const Bytes& payload);
// The 52-octet Atomic Request header (RFC 7306 section 5.2.1).
Bytes AtomicRequestHeader(const siwx_atomic_req& r);

// Octet 0 of a DDP header: T | L | Rsvd | DV (RFC 5041 section 4.2).
void SetDdpVersion(Bytes& ulpdu, uint8_t dv);

// MPA framing (RFC 5044 section 4.1): length, ULPDU, PAD, CRC32c (zero
// when CRCs were not negotiated).
Bytes Frame(const Bytes& ulpdu, bool crc_on);
// Invert one bit of the CRC field of a framed FPDU.
void CorruptCrc(Bytes& fpdu);

// The DDP header at the start of @ulpdu (14 or 18 octets by its T flag).
Bytes DdpHeaderOf(const Bytes& ulpdu);

std::string Hex(const uint8_t* p, size_t n);
inline std::string Hex(const Bytes& b) { return Hex(b.data(), b.size()); }

}  // namespace wirepeer
