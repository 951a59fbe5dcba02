// FPDU builders of siwx-wire-peer (see fpdu.h).
#include "fpdu.h"

#include <cstdio>

extern "C" {
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/ddp.h>
#include <siwx/proto/mpa.h>
}

namespace wirepeer {

namespace {

Bytes Segment(const siwx_ddp_hdr& h, const Bytes& body) {
    Bytes out(siwx_ddp_hdr_len(h.tagged));
    siwx_ddp_encode(&h, out.data());
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

}  // namespace

Bytes UntaggedUlpdu(uint8_t opcode, uint32_t qn, uint32_t msn, const Bytes& body) {
    siwx_ddp_hdr h{};
    h.opcode = opcode;
    h.last = true;
    h.qn = qn;
    h.msn = msn;
    return Segment(h, body);
}

Bytes TaggedUlpdu(uint8_t opcode, uint32_t stag, uint64_t to, const Bytes& payload) {
    siwx_ddp_hdr h{};
    h.opcode = opcode;
    h.tagged = true;
    h.last = true;
    h.stag = stag;
    h.to = to;
    return Segment(h, payload);
}

Bytes AtomicRequestHeader(const siwx_atomic_req& r) {
    Bytes out(SIWX_ATOMIC_REQ_LEN);
    siwx_atomic_req_encode(&r, out.data());
    return out;
}

void SetDdpVersion(Bytes& ulpdu, uint8_t dv) {
    ulpdu.at(0) = uint8_t((ulpdu[0] & ~SIWX_DDP_DV_MASK) | (dv & SIWX_DDP_DV_MASK));
}

Bytes Frame(const Bytes& ulpdu, bool crc_on) {
    const auto len = uint32_t(ulpdu.size());
    Bytes out(siwx_mpa_fpdu_len(len));
    siwx_put_be16(out.data(), uint16_t(len));
    std::copy(ulpdu.begin(), ulpdu.end(), out.begin() + SIWX_MPA_LEN_FIELD);
    uint32_t crc = SIWX_CRC32C_INIT;
    if (crc_on) crc = siwx_crc32c(crc, out.data(), SIWX_MPA_LEN_FIELD + len);
    siwx_mpa_trailer(crc, len, crc_on, out.data() + SIWX_MPA_LEN_FIELD + len);
    return out;
}

void CorruptCrc(Bytes& fpdu) { fpdu.at(fpdu.size() - 1) ^= 0x01; }

Bytes DdpHeaderOf(const Bytes& ulpdu) {
    const size_t n = siwx_ddp_hdr_len(!ulpdu.empty() && (ulpdu[0] & SIWX_DDP_T_FLAG));
    return Bytes(ulpdu.begin(), ulpdu.begin() + long(std::min(n, ulpdu.size())));
}

std::string Hex(const uint8_t* p, size_t n) {
    std::string s;
    char b[4];
    for (size_t i = 0; i < n; i++) {
        std::snprintf(b, sizeof(b), i ? " %02x" : "%02x", p[i]);
        s += b;
    }
    return s;
}

}  // namespace wirepeer
