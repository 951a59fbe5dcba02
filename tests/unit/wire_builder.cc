#include "wire_builder.h"

#include <algorithm>
#include <cstdio>

namespace siwx_test {

Bytes Be16(uint16_t v) { return {uint8_t(v >> 8), uint8_t(v)}; }

Bytes Be32(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }

Bytes Be64(uint64_t v) { return Cat({Be32(uint32_t(v >> 32)), Be32(uint32_t(v))}); }

Bytes Cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes Repeat(uint8_t octet, size_t n) { return Bytes(n, octet); }

uint32_t ReferenceCrc32c(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            bool in = ((p[i] >> bit) & 1) != (crc & 1);
            crc >>= 1;
            if (in) crc ^= 0x82f63b78u;
        }
    }
    return ~crc;
}

Bytes Fpdu(const Bytes& ulpdu, bool with_crc) {
    Bytes out = Cat({Be16(uint16_t(ulpdu.size())), ulpdu});
    while (out.size() % 4 != 0) out.push_back(0);
    uint32_t crc = with_crc ? ReferenceCrc32c(out.data(), out.size()) : 0;
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(crc >> (8 * i)));
    return out;
}

Bytes Ctrl(bool tagged, bool last, uint8_t opcode, uint8_t dv, uint8_t rv) {
    return {uint8_t((tagged ? 0x80 : 0) | (last ? 0x40 : 0) | (dv & 3)),
            uint8_t((rv & 3) << 6 | (opcode & 0xf))};
}

Bytes Untagged(bool last, uint8_t opcode, uint32_t qn, uint32_t msn, uint32_t mo, uint32_t inval) {
    return Cat({Ctrl(false, last, opcode), Be32(inval), Be32(qn), Be32(msn), Be32(mo)});
}

Bytes Tagged(bool last, uint8_t opcode, uint32_t stag, uint64_t to) {
    return Cat({Ctrl(true, last, opcode), Be32(stag), Be64(to)});
}

siwx_ddp_hdr UntaggedHdr(uint8_t op, uint32_t qn, uint32_t msn, uint32_t inval, bool last) {
    siwx_ddp_hdr h{};
    h.opcode = op;
    h.qn = qn;
    h.msn = msn;
    h.inval_stag = inval;
    h.last = last;
    return h;
}

siwx_ddp_hdr TaggedHdr(uint8_t op, uint32_t stag, uint64_t to, bool last) {
    siwx_ddp_hdr h{};
    h.opcode = op;
    h.tagged = true;
    h.stag = stag;
    h.to = to;
    h.last = last;
    return h;
}

std::string Hex(const Bytes& b) {
    std::string s;
    char buf[4];
    for (uint8_t o : b) {
        std::snprintf(buf, sizeof(buf), "%02x ", o);
        s += buf;
    }
    return s;
}

namespace {

void TakePayload(siwx_rx* rx, const siwx_rx_event& ev, RxCrc crc, Bytes* out) {
    if (crc == RxCrc::kParser) {
        out->insert(out->end(), ev.data, ev.data + ev.len);
        return;
    }
    size_t placed = ev.len / 2;
    size_t at = out->size();
    out->resize(at + ev.len);
    if (crc == RxCrc::kForgotten) {
        std::copy(ev.data, ev.data + ev.len, out->begin() + at);
        return;
    }
    siwx_rx_place(rx, out->data() + at, ev.data, placed);
    siwx_rx_skip(rx, ev.data + placed, ev.len - placed);
    std::copy(ev.data + placed, ev.data + ev.len, out->begin() + at + placed);
}

}  // namespace

RxRecord ParseStream(const Bytes& stream, size_t chunk, bool crc_on, RxCrc crc, RxFeed feed) {
    RxRecord rec;
    siwx_rx rx;
    siwx_rx_init(&rx, crc_on);
    if (crc != RxCrc::kParser) siwx_rx_defer_crc(&rx);
    size_t pos = 0;
    while (pos < stream.size() && !rec.error) {
        size_t n = chunk ? std::min(chunk, stream.size() - pos) : stream.size() - pos;
        const uint8_t* p = stream.data() + pos;
        size_t left = n;
        while (left > 0) {
            siwx_rx_event ev;
            size_t used = feed == RxFeed::kFast ? siwx_rx_feed_fast(&rx, p, left, &ev)
                                                : siwx_rx_feed(&rx, p, left, &ev);
            p += used;
            left -= used;
            if (ev.type == SIWX_RX_SEGMENT) {
                rec.segments.push_back(rx.seg);
                rec.payloads.emplace_back();
            } else if (ev.type == SIWX_RX_PAYLOAD) {
                TakePayload(&rx, ev, crc, &rec.payloads.back());
            } else if (ev.type == SIWX_RX_SEGMENT_END) {
                ++rec.segment_ends;
            } else if (ev.type == SIWX_RX_ERROR) {
                rec.error = true;
                rec.term = rx.term;
                break;
            } else if (used == 0) {
                break;
            }
        }
        pos += n;
    }
    return rec;
}

}  // namespace siwx_test
