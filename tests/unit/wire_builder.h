// Hand-built wire images for tests: octet strings assembled field by field
// from the RFC figures, independent of the core's encoders.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "proto.h"

namespace siwx_test {

using Bytes = std::vector<uint8_t>;

Bytes Be16(uint16_t v);
Bytes Be32(uint32_t v);
Bytes Be64(uint64_t v);
Bytes Cat(std::initializer_list<Bytes> parts);
Bytes Repeat(uint8_t octet, size_t n);

// CRC32c computed bit by bit from the polynomial: a reference that shares
// no code with the core's table-driven implementation.
uint32_t ReferenceCrc32c(const uint8_t* p, size_t n);

// An FPDU around @ulpdu: ULPDU_Length, ULPDU, zero PAD, CRC (LSB first).
Bytes Fpdu(const Bytes& ulpdu, bool with_crc = true);

// Control octets of a DDP header (RFC 5040 figure 3).
Bytes Ctrl(bool tagged, bool last, uint8_t opcode, uint8_t dv = 1, uint8_t rv = 1);
// Untagged / tagged DDP headers.
Bytes Untagged(bool last, uint8_t opcode, uint32_t qn, uint32_t msn, uint32_t mo,
               uint32_t inval = 0);
Bytes Tagged(bool last, uint8_t opcode, uint32_t stag, uint64_t to);

// Decoded DDP headers, as the core's encoders and queues take them.
siwx_ddp_hdr UntaggedHdr(uint8_t op, uint32_t qn, uint32_t msn, uint32_t inval = 0,
                         bool last = false);
siwx_ddp_hdr TaggedHdr(uint8_t op, uint32_t stag, uint64_t to, bool last = false);

std::string Hex(const Bytes& b);

// Feed a byte stream to a parser in chunks of @chunk octets (0: all at
// once) and record the events, payload concatenated per segment.
struct RxRecord {
    std::vector<siwx_rx_seg> segments;
    std::vector<Bytes> payloads;
    int segment_ends = 0;
    bool error = false;
    siwx_term term{};
};
// Who folds payload into the CRC: the parser; the caller, placing the first
// half of each slice with siwx_rx_place() and skipping the rest with
// siwx_rx_skip(); or the caller, forgetting to (it must fail the CRC).
enum class RxCrc { kParser, kPlaceAndSkip, kForgotten };
// The receiver's entry, siwx_rx_feed_fast() as the kernel's, or siwx_rx_feed() itself.
enum class RxFeed { kFast, kPlain };
RxRecord ParseStream(const Bytes& stream, size_t chunk, bool crc_on = true,
                     RxCrc crc = RxCrc::kParser, RxFeed feed = RxFeed::kFast);

}  // namespace siwx_test

inline bool operator==(const siwx_term& a, const siwx_term& b) { return siwx_term_eq(a, b); }
inline std::ostream& operator<<(std::ostream& os, const siwx_term& t) {
    return os << "{layer " << int(t.layer) << ", etype " << int(t.etype) << ", code 0x" << std::hex
              << int(t.ecode) << std::dec << "}";
}
