// The frame generator of siwx-wire-fuzz (see fuzz_frames.h).
#include "fuzz_frames.h"

extern "C" {
#include <siwx/proto/bytes.h>
#include <siwx/proto/crc32c.h>
#include <siwx/proto/ddp.h>
#include <siwx/proto/mpa.h>
#include <siwx/proto/rdmap.h>
}

namespace wirepeer {

namespace {

// Our sink STags for Read Responses: never registered at the server, so
// that a Read Response it takes for an own Read would be refused.
constexpr uint32_t kSinkStagBase = 0x51570000u;
// The Invalidate STag field of an untagged DDP header: octets 2-5 (RFC
// 5040 section 4.3, RFC 5041 section 4.4 "reserved for the ULP").
constexpr size_t kInvalStagOff = 2;

siwx_term RdmapOp(uint8_t code) {
    return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, code);
}

siwx_term DdpUntagged(uint8_t code) {
    return siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, code);
}

// The ULPDU inside a framed FPDU (its MPA length field says how long).
size_t UlpduLen(const Bytes& fpdu) { return siwx_get_be16(fpdu.data()); }

// MPA framing again over the (possibly changed) ULPDU of @fpdu.
void Reframe(Bytes& fpdu, size_t ulpdu_len, bool crc_on) {
    Bytes u(fpdu.begin() + SIWX_MPA_LEN_FIELD, fpdu.begin() + SIWX_MPA_LEN_FIELD + long(ulpdu_len));
    fpdu = Frame(u, crc_on);
}

}  // namespace

const uint8_t kFuzzOpcodes[SIWX_OP_COUNT] = {
    SIWX_OP_WRITE,      SIWX_OP_READ_REQ, SIWX_OP_READ_RESP,     SIWX_OP_SEND,
    SIWX_OP_SEND_INVAL, SIWX_OP_SEND_SE,  SIWX_OP_SEND_SE_INVAL, SIWX_OP_TERMINATE,
    SIWX_OP_IMM,        SIWX_OP_IMM_SE,   SIWX_OP_ATOMIC_REQ,    SIWX_OP_ATOMIC_RESP,
};

uint64_t Rng::Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t ConnSeed(uint64_t seed, uint64_t conn) {
    Rng r(seed ^ (conn * 0xd1342543de82ef95ull));
    return r.Next();
}

FrameGen::FrameGen(uint64_t conn_seed, const Target& t, bool crc_on, const FuzzLimits& lim)
    : rng_(conn_seed), t_(t), crc_(crc_on), lim_(lim), recvs_left_(lim.recvs) {
    // RFC 5041 section 5.1: every queue's first MSN is 1.
    for (uint32_t& m : msn_) m = 1;
}

uint32_t FrameGen::DrawLen(uint32_t max) {
    static const uint32_t kEdges[] = {0, 1, 7, 8, 9, 63, 64, 65};
    uint32_t n;
    switch (rng_.Below(4)) {
        case 0:
            n = kEdges[rng_.Below(sizeof(kEdges) / sizeof(kEdges[0]))];
            break;
        case 1:
            // Mostly short: a million frames must fit the suite's budget.
            n = uint32_t(rng_.Below(rng_.OneIn(64) ? uint64_t(max) + 1 : 257));
            break;
        default:
            n = uint32_t(rng_.Below(33));
            break;
    }
    return n > max ? max : n;
}

// An offset into the target for @len octets: its first or last octets
// (the edges a bounds test can get wrong) or anywhere between.
uint64_t FrameGen::DrawTo(uint32_t len, bool read) {
    uint64_t base = t_.addr;
    uint32_t span = t_.len;
    if (lim_.apart) {
        span = t_.len / 2;
        if (!read) base += span;
        if (len > span) len = span;
    }
    const uint32_t room = span - len;
    switch (rng_.Below(4)) {
        case 0:
            return base;
        case 1:
            return base + room;
        default:
            return base + rng_.Below(uint64_t(room) + 1);
    }
}

// The rkey with its key octet changed: same index, wrong key.
uint32_t FrameGen::InvalidStag() { return t_.rkey ^ uint32_t(1 + rng_.Below(255)); }

FuzzFrame FrameGen::Write(uint32_t stag, uint64_t to, uint32_t len) {
    Bytes p(len);
    for (uint8_t& b : p) b = uint8_t(rng_.Next());
    FuzzFrame f;
    f.fpdu = Frame(TaggedUlpdu(SIWX_OP_WRITE, stag, to, p), crc_);
    f.opcode = SIWX_OP_WRITE;
    f.what = "RDMA Write";
    return f;
}

FuzzFrame FrameGen::ReadReq(uint32_t stag, uint64_t to, uint32_t size) {
    FuzzFrame f;
    f.req.kind = Request::Kind::kRead;
    f.req.req_id = req_id_++;
    f.req.sink_stag = kSinkStagBase | (f.req.req_id & 0xffff);
    f.req.sink_to = 0x100000ull * (1 + f.req.req_id % 64);
    f.req.size = size;
    siwx_read_req rr{f.req.sink_stag, f.req.sink_to, size, stag, to};
    Bytes h(SIWX_READ_REQ_LEN);
    siwx_read_req_encode(&rr, h.data());
    f.fpdu = Frame(UntaggedUlpdu(SIWX_OP_READ_REQ, SIWX_QN_READ, msn_[SIWX_QN_READ]++, h), crc_);
    f.opcode = SIWX_OP_READ_REQ;
    f.what = "Read Request";
    f.on_qn1 = true;
    return f;
}

FuzzFrame FrameGen::Atomic(uint32_t stag, uint64_t to, bool cmp_swap) {
    siwx_atomic_req r{};
    const uint32_t id = req_id_++;
    // Masks from all-zero to all-ones and the odd field patterns between
    // (RFC 7306 sections 5.1.1, 5.1.2).
    static const uint64_t kMasks[] = {0, ~0ull, 0x8000000000000000ull, 0x8000800080008000ull,
                                      0x8080808080808080ull};
    const uint64_t m1 = rng_.OneIn(2) ? kMasks[rng_.Below(5)] : rng_.Next();
    const uint64_t m2 = rng_.OneIn(2) ? kMasks[rng_.Below(5)] : rng_.Next();
    if (cmp_swap)
        siwx_atomic_req_cmp_swap(&r, id, stag, to, rng_.Next(), m1, rng_.Next(), m2);
    else
        siwx_atomic_req_fetch_add(&r, id, stag, to, rng_.Next(), m1);
    FuzzFrame f;
    f.fpdu = Frame(UntaggedUlpdu(SIWX_OP_ATOMIC_REQ, SIWX_QN_READ, msn_[SIWX_QN_READ]++,
                                 AtomicRequestHeader(r)),
                   crc_);
    f.opcode = SIWX_OP_ATOMIC_REQ;
    f.what = cmp_swap ? "Atomic CmpSwap" : "Atomic FetchAdd";
    f.on_qn1 = true;
    f.req.kind = Request::Kind::kAtomic;
    f.req.req_id = id;
    return f;
}

FuzzFrame FrameGen::Untagged(uint8_t opcode, uint32_t qn, uint32_t msn, Bytes body) {
    FuzzFrame f;
    f.fpdu = Frame(UntaggedUlpdu(opcode, qn, msn, body), crc_);
    f.opcode = opcode;
    return f;
}

FuzzFrame FrameGen::Template(uint8_t opcode) {
    switch (opcode) {
        case SIWX_OP_WRITE: {
            const uint32_t len = DrawLen(lim_.apart ? t_.len / 2 : t_.len);
            return Write(t_.rkey, DrawTo(len), len);
        }
        case SIWX_OP_READ_REQ: {
            // Either registration allows REMOTE_READ; at least one octet.
            const uint32_t len = 1 + DrawLen((lim_.apart ? t_.len / 2 : t_.len) - 1);
            return ReadReq(rng_.OneIn(2) ? t_.rkey : t_.ro_rkey, DrawTo(len, true), len);
        }
        case SIWX_OP_READ_RESP: {
            Bytes p(DrawLen(256));
            for (uint8_t& b : p) b = uint8_t(rng_.Next());
            FuzzFrame f;
            f.fpdu = Frame(TaggedUlpdu(SIWX_OP_READ_RESP, kSinkStagBase, 0x100000, p), crc_);
            f.opcode = opcode;
            f.what = "Read Response";
            return f;
        }
        case SIWX_OP_SEND:
        case SIWX_OP_SEND_SE:
        case SIWX_OP_SEND_INVAL:
        case SIWX_OP_SEND_SE_INVAL: {
            Bytes p(DrawLen(lim_.recv_len));
            for (uint8_t& b : p) b = uint8_t(rng_.Next());
            FuzzFrame f = Untagged(opcode, SIWX_QN_SEND, msn_[SIWX_QN_SEND]++, p);
            if (recvs_left_) recvs_left_--;
            const bool inval = opcode == SIWX_OP_SEND_INVAL || opcode == SIWX_OP_SEND_SE_INVAL;
            if (inval)
                siwx_put_be32(f.fpdu.data() + SIWX_MPA_LEN_FIELD + kInvalStagOff,
                              rng_.OneIn(2) ? InvalidStag() : t_.rkey);
            if (inval) Reframe(f.fpdu, UlpduLen(f.fpdu), crc_);
            f.what = inval ? "Send with Invalidate" : "Send";
            return f;
        }
        case SIWX_OP_TERMINATE: {
            // RFC 5040 section 4.8: a Terminate with no headers echoed.
            siwx_term_hdr th{};
            th.cause = siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                      SIWX_RDMAP_UNSPECIFIED);
            Bytes h(siwx_term_hdr_len(&th));
            siwx_term_hdr_encode(&th, h.data());
            FuzzFrame f = Untagged(opcode, SIWX_QN_TERM, msn_[SIWX_QN_TERM]++, h);
            f.what = "Terminate";
            f.peer_term = true;
            return f;
        }
        case SIWX_OP_IMM:
        case SIWX_OP_IMM_SE: {
            Bytes imm(SIWX_IMM_LEN);
            for (uint8_t& b : imm) b = uint8_t(rng_.Next());
            FuzzFrame f = Untagged(opcode, SIWX_QN_SEND, msn_[SIWX_QN_SEND]++, imm);
            if (recvs_left_) recvs_left_--;
            f.what = "Immediate Data";
            return f;
        }
        case SIWX_OP_ATOMIC_REQ: {
            const uint32_t words = lim_.apart ? t_.len / 16 : t_.len / 8;
            const uint64_t first = lim_.apart ? t_.addr + t_.len / 2 : t_.addr;
            return Atomic(t_.rkey, first + 8 * rng_.Below(words), rng_.OneIn(2));
        }
        case SIWX_OP_ATOMIC_RESP:
        default: {
            siwx_atomic_resp ar{uint32_t(rng_.Next()), rng_.Next()};
            Bytes h(SIWX_ATOMIC_RESP_LEN);
            siwx_atomic_resp_encode(&ar, h.data());
            FuzzFrame f =
                Untagged(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP, msn_[SIWX_QN_ATOMIC_RESP]++, h);
            f.what = "Atomic Response";
            return f;
        }
    }
}

void FrameGen::Mutate(FuzzFrame& f) {
    Bytes& b = f.fpdu;
    const size_t ulen = UlpduLen(b);
    const Bytes before = b;
    bool reframe = !rng_.OneIn(8);  // most mutations still reach the parser
    size_t new_len = ulen;
    switch (rng_.Below(6)) {
        case 0:  // bit flips anywhere in the ULPDU
            for (uint64_t n = 1 + rng_.Below(3); n; n--) {
                const size_t at = SIWX_MPA_LEN_FIELD + rng_.Below(ulen);
                b[at] ^= uint8_t(1u << rng_.Below(8));
            }
            break;
        case 1:  // an octet of the headers set to an edge value
        case 2: {
            static const uint8_t kOctets[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
            const size_t hdr = ulen < 32 ? ulen : 32;
            b[SIWX_MPA_LEN_FIELD + rng_.Below(hdr)] = kOctets[rng_.Below(5)];
            break;
        }
        case 3:  // truncated ULPDU, MPA length to match
            new_len = rng_.Below(ulen);
            break;
        case 4:  // MPA length that does not frame the ULPDU
            reframe = false;
            siwx_put_be16(b.data(), uint16_t(ulen + 1 + rng_.Below(64)));
            f.desync = true;
            break;
        default:  // CRC only
            reframe = false;
            CorruptCrc(b);
            break;
    }
    // Flips that undid each other, an octet set to what it was: one more.
    if (b == before) b[SIWX_MPA_LEN_FIELD + rng_.Below(ulen)] ^= uint8_t(1u << rng_.Below(8));
    if (reframe) Reframe(b, new_len, crc_);
    f.risk = Risk::kMaybe;
    f.what = "raw mutation";
    f.req = Request{};
}

// The frames siwx must simply process: Writes most of all, Read and
// Atomic Requests, QN 0 messages while receives are left; a few raw
// mutations, which may or may not be refused.
FuzzFrame FrameGen::Body() {
    if (rng_.OneIn(lim_.mutate_one_in)) {
        FuzzFrame f = Template(SIWX_OP_WRITE);
        Mutate(f);
        return f;
    }
    const uint64_t r = rng_.Below(1000);
    if (r < 30 && recvs_left_) {
        static const uint8_t kQn0[] = {SIWX_OP_SEND, SIWX_OP_SEND_SE, SIWX_OP_IMM, SIWX_OP_IMM_SE};
        return Template(kQn0[rng_.Below(4)]);
    }
    if (r < 45) return Template(SIWX_OP_READ_REQ);
    if (r < 60) return Template(SIWX_OP_ATOMIC_REQ);
    if (r < 80) {
        // RFC 5041 section 7.2 as siwx reads it (siwx_ddp_tagged_needs_stag):
        // nothing placed, so any STag and TO.
        FuzzFrame f = Write(uint32_t(rng_.Next()), rng_.Next(), 0);
        f.what = "RDMA Write, zero length";
        return f;
    }
    return Template(SIWX_OP_WRITE);
}

FuzzFrame FrameGen::Exact(FuzzFrame f, siwx_term cause, bool with_rdma) {
    const Bytes u(f.fpdu.begin() + SIWX_MPA_LEN_FIELD,
                  f.fpdu.begin() + SIWX_MPA_LEN_FIELD + long(UlpduLen(f.fpdu)));
    f.risk = Risk::kEnd;
    f.exact = true;
    f.req = Request{};
    f.expect.cause = cause;
    f.expect.echo_ddp = DdpHeaderOf(u);
    f.expect.seg_len = uint16_t(u.size());
    // RFC 5040 section 7.1 rule 3: a refused Read Request is echoed.
    if (with_rdma)
        f.expect.echo_rdma.assign(u.begin() + SIWX_DDP_UNTAGGED_HDR_LEN,
                                  u.begin() + SIWX_DDP_UNTAGGED_HDR_LEN + SIWX_READ_REQ_LEN);
    return f;
}

// A frame that must end the connection with the Terminate the RFCs name
// (the same causes siwx-wire-peer's fixed cases check, cases.cc).
FuzzFrame FrameGen::Ending() {
    const uint32_t wlen = 1 + DrawLen(t_.len - 1);
    for (;;) {
        switch (rng_.Below(18)) {
            case 0:
                return Exact(Write(InvalidStag(), DrawTo(wlen), wlen),
                             siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_INVALID_STAG),
                             false);
            case 1:
                return Exact(Write(t_.ro_rkey, DrawTo(wlen), wlen),
                             siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_ACCESS_RIGHTS),
                             false);
            case 2: {
                // One octet or more over either edge of the region.
                const uint64_t over = 1 + rng_.Below(wlen);
                const uint64_t to = rng_.OneIn(2) ? t_.addr - over : t_.addr + t_.len - wlen + over;
                return Exact(Write(t_.rkey, to, wlen),
                             siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_BOUNDS), false);
            }
            case 3:
                // TO + length past 2^64 (RFC 5041 section 7.2).
                return Exact(Write(t_.rkey, ~0ull - rng_.Below(wlen), wlen + 1),
                             siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_TO_WRAP), false);
            case 4:
                return Exact(ReadReq(InvalidStag(), DrawTo(wlen), wlen),
                             siwx_term_for_access(SIWX_ACCESS_READ_SOURCE, SIWX_FAULT_INVALID_STAG),
                             true);
            case 5:
                return Exact(ReadReq(t_.rkey, t_.addr + t_.len - wlen + 1 + rng_.Below(wlen), wlen),
                             siwx_term_for_access(SIWX_ACCESS_READ_SOURCE, SIWX_FAULT_BOUNDS),
                             true);
            case 6:
                return Exact(
                    Atomic(t_.rkey, t_.addr + 8 * rng_.Below(t_.len / 8) + 1 + rng_.Below(7),
                           rng_.OneIn(2)),
                    siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_MISALIGNED), false);
            case 7:
                return Exact(
                    Atomic(t_.rkey, rng_.OneIn(2) ? t_.addr - 8 : t_.addr + t_.len, rng_.OneIn(2)),
                    siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_BOUNDS), false);
            case 8:
                return Exact(Atomic(InvalidStag(), t_.addr, rng_.OneIn(2)),
                             siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_INVALID_STAG),
                             false);
            case 9:
                return Exact(Atomic(t_.ro_rkey, t_.addr, rng_.OneIn(2)),
                             siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_ACCESS_RIGHTS),
                             false);
            case 10: {
                // RFC 7306 section 5.2.1: AOpCodes 1 and 3-15 are reserved.
                FuzzFrame f = Atomic(t_.rkey, t_.addr, false);
                static const uint8_t kReserved[] = {1, 3, 4, 7, 8, 15};
                // The low nibble of the header's fourth octet (figure 4).
                const size_t at = SIWX_MPA_LEN_FIELD + SIWX_DDP_UNTAGGED_HDR_LEN + 3;
                f.fpdu[at] = uint8_t((f.fpdu[at] & 0xf0) | kReserved[rng_.Below(6)]);
                Reframe(f.fpdu, UlpduLen(f.fpdu), crc_);
                return Exact(f, RdmapOp(SIWX_RDMAP_UNEXPECTED_OPCODE), false);
            }
            case 11: {
                // RFC 7306 section 6.3: exactly 8 octets of Immediate Data.
                if (!recvs_left_) break;
                uint32_t n = 1 + uint32_t(rng_.Below(15));
                if (n >= SIWX_IMM_LEN) n++;
                FuzzFrame f = Untagged(rng_.OneIn(2) ? SIWX_OP_IMM : SIWX_OP_IMM_SE, SIWX_QN_SEND,
                                       msn_[SIWX_QN_SEND]++, Bytes(n, 0xd1));
                return Exact(f, RdmapOp(SIWX_RDMAP_CATASTROPHIC_STREAM), false);
            }
            case 12: {
                // RFC 5040 section 7.2: no RDMAP opcode above 0xb (RFC 7306).
                FuzzFrame f = Untagged(uint8_t(0xc + rng_.Below(4)), SIWX_QN_SEND,
                                       msn_[SIWX_QN_SEND], Bytes(8, 0x42));
                return Exact(f, RdmapOp(SIWX_RDMAP_UNEXPECTED_OPCODE), false);
            }
            case 13: {
                // RV other than 1 (RFC 5040 section 4.2), DV other than 1
                // (RFC 5041 section 4.2), on an Atomic Request.
                FuzzFrame f = Atomic(t_.rkey, t_.addr, false);
                static const uint8_t kVer[] = {0, 2, 3};
                const uint8_t v = kVer[rng_.Below(3)];
                const bool rdmap = rng_.OneIn(2);
                uint8_t* u = f.fpdu.data() + SIWX_MPA_LEN_FIELD;
                if (rdmap)
                    u[1] = uint8_t((u[1] & 0x3f) | (v << 6));
                else
                    u[0] = uint8_t((u[0] & ~SIWX_DDP_DV_MASK) | v);
                Reframe(f.fpdu, UlpduLen(f.fpdu), crc_);
                return Exact(f,
                             rdmap ? RdmapOp(SIWX_RDMAP_INVALID_VERSION)
                                   : DdpUntagged(SIWX_DDP_UT_INVALID_VERSION),
                             false);
            }
            case 14: {
                // RFC 5041 section 7.2: MSN out of range, receive too short,
                // no receive left.
                if (recvs_left_ >= 2) {
                    FuzzFrame f = Untagged(SIWX_OP_SEND, SIWX_QN_SEND, msn_[SIWX_QN_SEND] + 1,
                                           Bytes(8, 0x33));
                    return Exact(f, DdpUntagged(SIWX_DDP_UT_MSN_RANGE), false);
                }
                if (recvs_left_ == 1) {
                    FuzzFrame f = Untagged(SIWX_OP_SEND, SIWX_QN_SEND, msn_[SIWX_QN_SEND]++,
                                           Bytes(lim_.recv_len + 1 + rng_.Below(200), 0x33));
                    return Exact(f, DdpUntagged(SIWX_DDP_UT_TOO_LONG), false);
                }
                FuzzFrame f =
                    Untagged(SIWX_OP_SEND, SIWX_QN_SEND, msn_[SIWX_QN_SEND]++, Bytes(8, 0x33));
                return Exact(f, DdpUntagged(SIWX_DDP_UT_NO_BUFFER), false);
            }
            case 15: {
                // No Atomic Request of siwx outstanding: QN 3 has no buffer.
                FuzzFrame f = Template(SIWX_OP_ATOMIC_RESP);
                return Exact(f, DdpUntagged(SIWX_DDP_UT_NO_BUFFER), false);
            }
            case 16: {
                // RFC 5040 section 5.3: an invalid STag, or one siwx may
                // not invalidate (a registration of ibv_reg_mr).
                if (!recvs_left_) break;
                const bool bad = rng_.OneIn(2);
                FuzzFrame f = Template(rng_.OneIn(2) ? SIWX_OP_SEND_INVAL : SIWX_OP_SEND_SE_INVAL);
                siwx_put_be32(f.fpdu.data() + SIWX_MPA_LEN_FIELD + kInvalStagOff,
                              bad ? InvalidStag() : t_.rkey);
                Reframe(f.fpdu, UlpduLen(f.fpdu), crc_);
                return Exact(
                    f,
                    siwx_term_for_access(SIWX_ACCESS_INVALIDATE,
                                         bad ? SIWX_FAULT_INVALID_STAG : SIWX_FAULT_ACCESS_RIGHTS),
                    false);
            }
            default: {
                // RFC 5044 section 8: a CRC error echoes no headers.
                if (!crc_) break;
                FuzzFrame f = Template(SIWX_OP_WRITE);
                CorruptCrc(f.fpdu);
                f = Exact(f, siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC),
                          false);
                f.expect.echo_ddp.clear();
                f.expect.seg_len = 0;
                return f;
            }
        }
    }
}

// Frames whose fate is less certain, ahead of the definite ending: a
// Read Response nobody asked for, a Send on a queue that does not exist,
// a raw mutation, our own Terminate (then nothing follows it).
FuzzFrame FrameGen::AnyEnding() {
    FuzzFrame f;
    switch (rng_.Below(4)) {
        case 0:
            f = Template(SIWX_OP_READ_RESP);
            break;
        case 1:
            f = Untagged(SIWX_OP_SEND, uint32_t(SIWX_QN_COUNT + rng_.Below(60)), 1, Bytes(8, 0));
            f.what = "Send on an invalid QN";
            break;
        case 2: {
            // Not our Terminate: mutated, it may still be one, and siwx
            // would rightly close without a Terminate of its own.
            uint8_t op = kFuzzOpcodes[rng_.Below(SIWX_OP_COUNT)];
            if (op == SIWX_OP_TERMINATE) op = SIWX_OP_WRITE;
            f = Template(op);
            Mutate(f);
            break;
        }
        default:
            f = Template(SIWX_OP_TERMINATE);
            break;
    }
    f.risk = Risk::kMaybe;
    f.req = Request{};
    return f;
}

std::vector<FuzzFrame> FrameGen::Connection(uint64_t max_body) {
    std::vector<FuzzFrame> out;
    // Endings anywhere from the first frame to twice the mean.
    uint64_t n = rng_.Below(2ull * lim_.frames + 1);
    if (n > max_body) n = max_body;
    out.reserve(n + 3);
    for (uint64_t i = 0; i < n; i++) out.push_back(Body());
    if (rng_.OneIn(4)) {
        out.push_back(AnyEnding());
        if (out.back().peer_term) return out;
    }
    out.push_back(Ending());
    return out;
}

}  // namespace wirepeer
