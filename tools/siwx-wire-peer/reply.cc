// Reply parsing and judgement of siwx-wire-peer (see reply.h).
#include "reply.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace wirepeer {

namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

const char* LayerName(uint8_t l) {
    switch (l) {
        case SIWX_LAYER_RDMAP:
            return "RDMAP";
        case SIWX_LAYER_DDP:
            return "DDP";
        case SIWX_LAYER_LLP:
            return "LLP";
        default:
            return "?";
    }
}

}  // namespace

std::string DescribeTerm(siwx_term t) {
    return Format("layer %u (%s) etype %u code 0x%02x", t.layer, LayerName(t.layer), t.etype,
                  t.ecode);
}

std::string Describe(const Expect& e) {
    if (e.kind == Expect::Kind::kAtomicResponse)
        return Format("Atomic Response (opcode 0xb, QN 3) req_id %u orig 0x%016" PRIx64, e.req_id,
                      e.orig);
    std::string s = "Terminate " + DescribeTerm(e.cause);
    if (e.echo_ddp.empty()) return s + ", no headers echoed";
    s += Format(", echoing DDP segment length %u and DDP header [%s]", e.seg_len,
                Hex(e.echo_ddp).c_str());
    if (!e.echo_rdma.empty()) s += " and RDMA header [" + Hex(e.echo_rdma) + "]";
    return s;
}

ReplyReader::ReplyReader(bool crc_on) { siwx_rx_init(&rx_, crc_on); }

void ReplyReader::Feed(const uint8_t* p, size_t n) {
    size_t used = 0;
    while (used < n && !broken_) {
        siwx_rx_event ev;
        used += siwx_rx_feed(&rx_, p + used, n - used, &ev);
        if (ev.type == SIWX_RX_ERROR) broken_ = true;
        if (ev.type == SIWX_RX_SEGMENT_END) msgs_.push_back(rx_.seg);
    }
}

std::string Describe(const siwx_rx_seg& m) {
    const siwx_ddp_hdr& d = m.ddp;
    std::string s = Format("opcode 0x%x %s", d.opcode, d.tagged ? "tagged" : "untagged");
    if (!d.tagged) s += Format(" QN %u MSN %u MO %u", d.qn, d.msn, d.mo);
    s += Format(" L %d ULPDU %u", d.last, m.ulpdu_len);
    if (d.opcode == SIWX_OP_TERMINATE) {
        const siwx_term_hdr& t = m.u.term;
        s += ": Terminate " + DescribeTerm(t.cause) +
             Format(" HdrCt M%d D%d R%d", !!(t.hdrct & SIWX_TERM_HDRCT_M),
                    !!(t.hdrct & SIWX_TERM_HDRCT_D), !!(t.hdrct & SIWX_TERM_HDRCT_R));
        if (t.hdrct & (SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D))
            s += Format(" seg_len %u", t.ddp_seg_len);
        if (t.hdrct & SIWX_TERM_HDRCT_D) s += " ddp [" + Hex(t.ddp_hdr, t.ddp_hdr_len) + "]";
        if (t.hdrct & SIWX_TERM_HDRCT_R)
            s += " rdma [" + Hex(t.rdma_hdr, SIWX_TERM_RDMA_HDR_LEN) + "]";
    } else if (d.opcode == SIWX_OP_ATOMIC_RESP) {
        s += Format(": Atomic Response req_id %u orig 0x%016" PRIx64, m.u.atomic_resp.req_id,
                    m.u.atomic_resp.orig);
    }
    return s;
}

std::string Judge(const Expect& e, const siwx_rx_seg& m) {
    const siwx_ddp_hdr& d = m.ddp;
    if (e.kind == Expect::Kind::kAtomicResponse) {
        if (d.opcode != SIWX_OP_ATOMIC_RESP || d.tagged || d.qn != SIWX_QN_ATOMIC_RESP)
            return "not an Atomic Response on QN 3";
        if (m.u.atomic_resp.req_id != e.req_id) return "wrong Original Request Identifier";
        if (m.u.atomic_resp.orig != e.orig) return "wrong Original Remote Data Value";
        return "";
    }
    if (d.opcode != SIWX_OP_TERMINATE || d.tagged || d.qn != SIWX_QN_TERM)
        return "not a Terminate on QN 2";
    const siwx_term_hdr& t = m.u.term;
    if (!siwx_term_eq(t.cause, e.cause)) return "wrong cause: " + DescribeTerm(t.cause);
    if (e.echo_ddp.empty()) {
        if (t.hdrct) return "headers echoed where none belong";
        return "";
    }
    const uint8_t hdrct = uint8_t(SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D |
                                  (e.echo_rdma.empty() ? 0 : SIWX_TERM_HDRCT_R));
    if (t.hdrct != hdrct) return Format("HdrCt 0x%x, want 0x%x", t.hdrct, hdrct);
    if (!e.echo_rdma.empty() &&
        Bytes(t.rdma_hdr, t.rdma_hdr + SIWX_TERM_RDMA_HDR_LEN) != e.echo_rdma)
        return "echoed RDMA header is not the Read Request sent";
    if (t.ddp_seg_len != e.seg_len) return Format("DDP segment length %u", t.ddp_seg_len);
    if (Bytes(t.ddp_hdr, t.ddp_hdr + t.ddp_hdr_len) != e.echo_ddp)
        return "echoed DDP header is not the one sent";
    return "";
}

}  // namespace wirepeer
