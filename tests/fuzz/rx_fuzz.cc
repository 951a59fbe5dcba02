// libFuzzer target for everything that parses bytes from the network: the
// RX stream parser, MPA Request/Reply frames and Terminate headers.
//
// Input: one control octet (bit 0: CRC on; bits 1-7: chunk size - 1), then
// the TCP byte stream. Besides "no crash, no sanitizer report", it checks
// that the receiver's entry (siwx_rx_feed_fast()) steps exactly as the plain
// parser does, and the parser's contract: payload slices lie inside the input, arrive in
// order and never exceed the segment, and every accepted header re-encodes
// to the octets it was decoded from (reserved bits aside).
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {
#include <siwx/proto/ddp.h>
#include <siwx/proto/mpa.h>
#include <siwx/proto/rx.h>
#include <siwx/proto/term.h>
}

namespace {

void Check(bool ok) {
    if (!ok) std::abort();
}

// DDP Resrv (byte 0) and RDMAP Rsv (byte 1) are ignored on receive.
void CheckReencodes(const siwx_rx_seg& seg) {
    uint8_t again[SIWX_DDP_UNTAGGED_HDR_LEN];
    size_t n = siwx_ddp_encode(&seg.ddp, again);
    Check(n == seg.ddp_hdr_len);
    Check((again[0] & ~0x3c) == (seg.raw[0] & ~0x3c));
    Check((again[1] & ~0x30) == (seg.raw[1] & ~0x30));
    Check(std::memcmp(again + 2, seg.raw + 2, n - 2) == 0);
}

// The receiver's entry and the plain parser, fed alike, step alike.
void CheckSameStep(const siwx_rx& fast, const siwx_rx& plain, size_t fast_used, size_t plain_used,
                   const siwx_rx_event& a, const siwx_rx_event& b) {
    Check(fast_used == plain_used && a.type == b.type);
    if (a.type == SIWX_RX_PAYLOAD)
        Check(a.data == b.data && a.len == b.len && a.offset == b.offset);
    Check(fast.state == plain.state);
    if (a.type == SIWX_RX_ERROR) Check(siwx_term_eq(fast.term, plain.term));
    if (a.type != SIWX_RX_SEGMENT) return;
    const siwx_rx_seg& x = fast.seg;
    const siwx_rx_seg& y = plain.seg;
    Check(x.op == y.op && x.ulpdu_len == y.ulpdu_len && x.payload_len == y.payload_len);
    Check(x.ddp_hdr_len == y.ddp_hdr_len && x.rdmap_hdr_len == y.rdmap_hdr_len);
    Check(std::memcmp(x.raw, y.raw, x.ddp_hdr_len) == 0);
    Check(x.ddp.opcode == y.ddp.opcode && x.ddp.tagged == y.ddp.tagged &&
          x.ddp.last == y.ddp.last && x.ddp.stag == y.ddp.stag && x.ddp.to == y.ddp.to &&
          x.ddp.inval_stag == y.ddp.inval_stag && x.ddp.qn == y.ddp.qn && x.ddp.msn == y.ddp.msn &&
          x.ddp.mo == y.ddp.mo);
}

void FuzzStream(const uint8_t* data, size_t size, bool crc_on, size_t chunk) {
    // The kernel's way: the caller folds the payload into the CRC
    siwx_rx rx;
    siwx_rx plain;
    siwx_rx_init(&rx, crc_on);
    siwx_rx_init(&plain, crc_on);
    siwx_rx_defer_crc(&rx);
    siwx_rx_defer_crc(&plain);
    bool in_segment = false;
    uint32_t payload_seen = 0;
    for (size_t pos = 0; pos < size;) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        const uint8_t* p = data + pos;
        size_t left = n;
        while (left > 0) {
            siwx_rx_event ev;
            siwx_rx_event plain_ev;
            size_t used = siwx_rx_feed_fast(&rx, p, left, &ev);
            size_t plain_used = siwx_rx_feed(&plain, p, left, &plain_ev);
            CheckSameStep(rx, plain, used, plain_used, ev, plain_ev);
            Check(used <= left);
            if (ev.type == SIWX_RX_PAYLOAD) {
                siwx_rx_skip(&rx, ev.data, ev.len);
                siwx_rx_skip(&plain, ev.data, ev.len);
            }
            switch (ev.type) {
                case SIWX_RX_SEGMENT:
                    Check(!in_segment);
                    in_segment = true;
                    payload_seen = 0;
                    Check(rx.seg.op != nullptr);
                    Check(!rx.seg.op->hdr_only || rx.seg.payload_len == 0);
                    CheckReencodes(rx.seg);
                    break;
                case SIWX_RX_PAYLOAD:
                    Check(in_segment);
                    Check(ev.data >= p && ev.data + ev.len <= p + used);
                    Check(ev.offset == payload_seen);
                    payload_seen += ev.len;
                    Check(payload_seen <= rx.seg.payload_len);
                    break;
                case SIWX_RX_SEGMENT_END:
                    Check(in_segment && payload_seen == rx.seg.payload_len);
                    in_segment = false;
                    break;
                case SIWX_RX_ERROR:
                    Check(rx.term.layer <= SIWX_LAYER_LLP);
                    return;
                case SIWX_RX_NEED_MORE:
                    Check(used == left);
                    break;
            }
            p += used;
            left -= used;
        }
        pos += n;
    }
}

void FuzzMpaFrame(const uint8_t* data, size_t size) {
    siwx_mpa_rr rr;
    size_t frame_len = 0;
    siwx_term err;
    if (siwx_mpa_rr_decode(data, size, &rr, &frame_len, &err) != SIWX_PARSE_OK) return;
    Check(frame_len <= size);
    Check(rr.pd_len == 0 || (rr.pd >= data && rr.pd + rr.pd_len <= data + frame_len));
    uint8_t again[SIWX_MPA_RR_HDR_LEN + SIWX_MPA_MAX_PD_LEN];
    Check(siwx_mpa_rr_encode(&rr, again) == frame_len);
    uint8_t ignored = rr.rev == 2 ? 0x0f : 0x1f;  // reserved flag bits
    Check((again[16] & ~ignored) == (data[16] & ~ignored));
    Check(std::memcmp(again + 17, data + 17, frame_len - 17) == 0);
}

void FuzzTerminate(const uint8_t* data, size_t size) {
    siwx_term_hdr h;
    if (!siwx_term_hdr_decode(data, size, &h)) return;
    uint8_t again[SIWX_TERM_MAX_LEN];
    Check(siwx_term_hdr_len(&h) == size);
    Check(siwx_term_hdr_encode(&h, again) == size);
    Check(std::memcmp(again + 4, data + 4, size - 4) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    bool crc_on = data[0] & 1;
    size_t chunk = 1 + (data[0] >> 1);
    FuzzStream(data + 1, size - 1, crc_on, chunk);
    FuzzStream(data + 1, size - 1, crc_on, size);
    FuzzMpaFrame(data + 1, size - 1);
    if (size - 1 <= SIWX_TERM_MAX_LEN) FuzzTerminate(data + 1, size - 1);
    return 0;
}
