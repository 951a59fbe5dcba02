// Byte-exact encodings of every RDMAP message (RFC 5040 figures 3-8,
// RFC 7306 figures 1-7 and appendix A) against octet strings built by hand,
// and decode(encode(x)) == x through the stream parser.
#include <gtest/gtest.h>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

// One FPDU for a single-segment message, through the core's TX path.
Bytes EncodeMessage(const siwx_ddp_hdr& hdr, const Bytes& rdmap_hdr, const Bytes& payload) {
    siwx_tx_msg m;
    siwx_tx_msg_init(&m, &hdr, rdmap_hdr.empty() ? nullptr : rdmap_hdr.data(),
                     uint32_t(rdmap_hdr.size()), uint32_t(payload.size()));
    siwx_tx_seg seg;
    Bytes out;
    while (siwx_tx_next(&m, 65535, &seg)) {
        Bytes fpdu(siwx_mpa_fpdu_len(seg.ulpdu_len));
        EXPECT_EQ(siwx_tx_fpdu(&seg, payload.data(), true, fpdu.data()), fpdu.size());
        out.insert(out.end(), fpdu.begin(), fpdu.end());
    }
    return out;
}

const Bytes kPayload = {'h', 'e', 'l', 'l', 'o'};

TEST(Wire, RdmaWrite) {
    Bytes want =
        Fpdu(Cat({Bytes{0xc1, 0x40}, Be32(0x11223344), Be64(0x0102030405060708), kPayload}));
    EXPECT_EQ(
        Hex(EncodeMessage(TaggedHdr(SIWX_OP_WRITE, 0x11223344, 0x0102030405060708), {}, kPayload)),
        Hex(want));
}

TEST(Wire, RdmaReadResponse) {
    Bytes want = Fpdu(Cat({Bytes{0xc1, 0x42}, Be32(0xabcdef01), Be64(0x1000), kPayload}));
    EXPECT_EQ(Hex(EncodeMessage(TaggedHdr(SIWX_OP_READ_RESP, 0xabcdef01, 0x1000), {}, kPayload)),
              Hex(want));
}

TEST(Wire, RdmaReadRequest) {
    siwx_read_req rr{0x0a0b0c0d, 0x1111222233334444, 4096, 0x01020304, 0x5555666677778888};
    Bytes hdr(SIWX_READ_REQ_LEN);
    ASSERT_EQ(siwx_read_req_encode(&rr, hdr.data()), size_t(SIWX_READ_REQ_LEN));
    Bytes want_hdr = Cat({Be32(0x0a0b0c0d), Be64(0x1111222233334444), Be32(4096), Be32(0x01020304),
                          Be64(0x5555666677778888)});
    EXPECT_EQ(hdr, want_hdr);
    Bytes want = Fpdu(Cat({Bytes{0x41, 0x41}, Be32(0), Be32(1), Be32(9), Be32(0), want_hdr}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(SIWX_OP_READ_REQ, SIWX_QN_READ, 9), hdr, {})),
              Hex(want));
}

struct SendCase {
    uint8_t opcode;
    uint8_t ctrl1;
    uint32_t inval;
};

class SendVariants : public ::testing::TestWithParam<SendCase> {};

TEST_P(SendVariants, Encoding) {
    const SendCase& c = GetParam();
    Bytes want =
        Fpdu(Cat({Bytes{0x41, c.ctrl1}, Be32(c.inval), Be32(0), Be32(7), Be32(0), kPayload}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(c.opcode, SIWX_QN_SEND, 7, c.inval), {}, kPayload)),
              Hex(want));
}

INSTANTIATE_TEST_SUITE_P(Rfc5040, SendVariants,
                         ::testing::Values(SendCase{SIWX_OP_SEND, 0x43, 0},
                                           SendCase{SIWX_OP_SEND_INVAL, 0x44, 0xdeadbeef},
                                           SendCase{SIWX_OP_SEND_SE, 0x45, 0},
                                           SendCase{SIWX_OP_SEND_SE_INVAL, 0x46, 0xfeedf00d}),
                         [](const ::testing::TestParamInfo<SendCase>& info) {
                             return "opcode" + std::to_string(info.param.opcode);
                         });

TEST(Wire, Terminate) {
    siwx_term_hdr t;
    Bytes offending = Untagged(true, SIWX_OP_ATOMIC_REQ, 1, 3, 0);
    siwx_term_hdr_build(&t, siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, 0x07), 70,
                        offending.data(), offending.size(), nullptr);
    Bytes hdr(siwx_term_hdr_len(&t));
    ASSERT_EQ(siwx_term_hdr_encode(&t, hdr.data()), hdr.size());
    // Layer 0 / EType 2, code 7, HdrCt M and D (bits 16, 17), DDP length, header.
    Bytes want_hdr = Cat({Bytes{0x02, 0x07, 0xc0, 0x00}, Be16(70), offending});
    EXPECT_EQ(Hex(hdr), Hex(want_hdr));
    Bytes want = Fpdu(Cat({Bytes{0x41, 0x47}, Be32(0), Be32(2), Be32(1), Be32(0), want_hdr}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(SIWX_OP_TERMINATE, SIWX_QN_TERM, 1), hdr, {})),
              Hex(want));
}

TEST(Wire, ImmediateDataAndWithSe) {
    Bytes imm = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0};
    for (auto [op, ctrl1] : {std::pair{SIWX_OP_IMM, 0x48}, std::pair{SIWX_OP_IMM_SE, 0x49}}) {
        Bytes want =
            Fpdu(Cat({Bytes{0x41, uint8_t(ctrl1)}, Be32(0), Be32(0), Be32(12), Be32(0), imm}));
        EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(uint8_t(op), SIWX_QN_SEND, 12), imm, {})),
                  Hex(want));
    }
}

TEST(Wire, AtomicRequestFetchAddIsFigure4) {
    siwx_atomic_req r;
    siwx_atomic_req_fetch_add(&r, 0x01020304, 0xa0b0c0d0, 0x1000, 5, 0);
    Bytes hdr(SIWX_ATOMIC_REQ_LEN);
    ASSERT_EQ(siwx_atomic_req_encode(&r, hdr.data()), size_t(52));
    Bytes want_hdr = Cat({Be32(0x0), Be32(0x01020304), Be32(0xa0b0c0d0), Be64(0x1000), Be64(5),
                          Be64(0), Be64(0), Be64(~0ULL)});
    EXPECT_EQ(Hex(hdr), Hex(want_hdr));
    Bytes want = Fpdu(Cat({Bytes{0x41, 0x4a}, Be32(0), Be32(1), Be32(2), Be32(0), want_hdr}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(SIWX_OP_ATOMIC_REQ, SIWX_QN_READ, 2), hdr, {})),
              Hex(want));
}

TEST(Wire, AtomicRequestCmpSwap) {
    siwx_atomic_req r;
    siwx_atomic_req_cmp_swap(&r, 7, 0x100, 0x2008, 0xaaaa, ~0ULL, 0xbbbb, ~0ULL);
    Bytes hdr(SIWX_ATOMIC_REQ_LEN);
    siwx_atomic_req_encode(&r, hdr.data());
    EXPECT_EQ(Hex(hdr), Hex(Cat({Be32(0x2), Be32(7), Be32(0x100), Be64(0x2008), Be64(0xbbbb),
                                 Be64(~0ULL), Be64(0xaaaa), Be64(~0ULL)})));
}

TEST(Wire, AtomicResponse) {
    siwx_atomic_resp r{0x01020304, 0x1122334455667788};
    Bytes hdr(SIWX_ATOMIC_RESP_LEN);
    ASSERT_EQ(siwx_atomic_resp_encode(&r, hdr.data()), size_t(12));
    Bytes want_hdr = Cat({Be32(0x01020304), Be64(0x1122334455667788)});
    EXPECT_EQ(hdr, want_hdr);
    Bytes want = Fpdu(Cat({Bytes{0x41, 0x4b}, Be32(0), Be32(3), Be32(1), Be32(0), want_hdr}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP, 1), hdr, {})),
              Hex(want));
}

TEST(Wire, ZeroLengthSendIsOneSegment) {
    Bytes want = Fpdu(Cat({Bytes{0x41, 0x43}, Be32(0), Be32(0), Be32(1), Be32(0)}));
    EXPECT_EQ(Hex(EncodeMessage(UntaggedHdr(SIWX_OP_SEND, 0, 1), {}, {})), Hex(want));
}

TEST(Opinfo, MatchesRfcTables) {
    struct Row {
        uint8_t op;
        bool tagged;
        uint8_t qn;
        bool hdr_only;
    };
    const Row rows[] = {
        {0x0, true, 0, false},  {0x1, false, 1, true},  {0x2, true, 0, false},
        {0x3, false, 0, false}, {0x4, false, 0, false}, {0x5, false, 0, false},
        {0x6, false, 0, false}, {0x7, false, 2, true},  {0x8, false, 0, true},
        {0x9, false, 0, true},  {0xa, false, 1, true},  {0xb, false, 3, true},
    };
    for (const Row& r : rows) {
        const struct siwx_opinfo* op = siwx_opinfo(r.op);
        ASSERT_NE(op, nullptr) << int(r.op);
        EXPECT_EQ(op->tagged, r.tagged) << int(r.op);
        if (!r.tagged) {
            EXPECT_EQ(op->qn, r.qn) << int(r.op);
        }
        EXPECT_EQ(op->hdr_only, r.hdr_only) << int(r.op);
    }
    for (int op = 0xc; op <= 0xf; ++op) EXPECT_EQ(siwx_opinfo(uint8_t(op)), nullptr);
    EXPECT_TRUE(siwx_opinfo(SIWX_OP_SEND_SE)->solicited);
    EXPECT_TRUE(siwx_opinfo(SIWX_OP_IMM_SE)->solicited);
    EXPECT_FALSE(siwx_opinfo(SIWX_OP_IMM)->solicited);
    EXPECT_EQ(siwx_opinfo(SIWX_OP_IMM)->hdr_min, 8);
    EXPECT_EQ(siwx_opinfo(SIWX_OP_ATOMIC_REQ)->hdr_min, 52);
    EXPECT_EQ(siwx_opinfo(SIWX_OP_ATOMIC_RESP)->hdr_min, 12);
}

// decode(encode(x)) == x for every message, through the stream parser.
TEST(RoundTrip, EveryMessageThroughParser) {
    siwx_read_req rr{1, 2, 3, 4, 5};
    Bytes rr_hdr(SIWX_READ_REQ_LEN);
    siwx_read_req_encode(&rr, rr_hdr.data());
    siwx_atomic_req ar;
    siwx_atomic_req_cmp_swap(&ar, 9, 10, 0x18, 11, 0xf0f0, 12, 0x0ff0);
    Bytes ar_hdr(SIWX_ATOMIC_REQ_LEN);
    siwx_atomic_req_encode(&ar, ar_hdr.data());
    siwx_atomic_resp as{9, 0x1234};
    Bytes as_hdr(SIWX_ATOMIC_RESP_LEN);
    siwx_atomic_resp_encode(&as, as_hdr.data());
    Bytes imm = {1, 2, 3, 4, 5, 6, 7, 8};
    siwx_term_hdr th;
    siwx_term_hdr_build(&th, siwx_term_make(0, 1, 2), 0, nullptr, 0, nullptr);
    Bytes th_hdr(siwx_term_hdr_len(&th));
    siwx_term_hdr_encode(&th, th_hdr.data());

    Bytes stream = Cat({
        EncodeMessage(TaggedHdr(SIWX_OP_WRITE, 0x77, 0x1000), {}, kPayload),
        EncodeMessage(UntaggedHdr(SIWX_OP_READ_REQ, 1, 1), rr_hdr, {}),
        EncodeMessage(TaggedHdr(SIWX_OP_READ_RESP, 0x78, 0x2000), {}, kPayload),
        EncodeMessage(UntaggedHdr(SIWX_OP_SEND_SE_INVAL, 0, 1, 0x99), {}, kPayload),
        EncodeMessage(UntaggedHdr(SIWX_OP_IMM_SE, 0, 2), imm, {}),
        EncodeMessage(UntaggedHdr(SIWX_OP_ATOMIC_REQ, 1, 2), ar_hdr, {}),
        EncodeMessage(UntaggedHdr(SIWX_OP_ATOMIC_RESP, 3, 1), as_hdr, {}),
        EncodeMessage(UntaggedHdr(SIWX_OP_TERMINATE, 2, 1), th_hdr, {}),
    });
    RxRecord rec = ParseStream(stream, 0);
    ASSERT_FALSE(rec.error) << rec.term;
    ASSERT_EQ(rec.segments.size(), 8u);
    EXPECT_EQ(rec.segment_ends, 8);
    EXPECT_EQ(rec.segments[0].ddp.stag, 0x77u);
    EXPECT_EQ(rec.segments[0].ddp.to, 0x1000u);
    EXPECT_EQ(rec.payloads[0], kPayload);
    const siwx_read_req& got_rr = rec.segments[1].u.read;
    EXPECT_EQ(got_rr.sink_stag, 1u);
    EXPECT_EQ(got_rr.sink_to, 2u);
    EXPECT_EQ(got_rr.size, 3u);
    EXPECT_EQ(got_rr.src_stag, 4u);
    EXPECT_EQ(got_rr.src_to, 5u);
    EXPECT_EQ(rec.segments[2].ddp.opcode, SIWX_OP_READ_RESP);
    EXPECT_EQ(rec.segments[3].ddp.inval_stag, 0x99u);
    EXPECT_EQ(rec.payloads[3], kPayload);
    EXPECT_EQ(Bytes(rec.segments[4].u.imm, rec.segments[4].u.imm + 8), imm);
    const siwx_atomic_req& got_ar = rec.segments[5].u.atomic;
    EXPECT_EQ(got_ar.aopcode, SIWX_AOP_CMP_SWAP);
    EXPECT_EQ(got_ar.req_id, 9u);
    EXPECT_EQ(got_ar.stag, 10u);
    EXPECT_EQ(got_ar.to, 0x18u);
    EXPECT_EQ(got_ar.compare, 11u);
    EXPECT_EQ(got_ar.compare_mask, 0xf0f0u);
    EXPECT_EQ(got_ar.add_swap, 12u);
    EXPECT_EQ(got_ar.add_swap_mask, 0x0ff0u);
    EXPECT_EQ(rec.segments[6].u.atomic_resp.req_id, 9u);
    EXPECT_EQ(rec.segments[6].u.atomic_resp.orig, 0x1234u);
    EXPECT_EQ(rec.segments[7].u.term.cause, siwx_term_make(0, 1, 2));
}

TEST(DdpDecode, RoundTripsHeaders) {
    siwx_ddp_hdr in = UntaggedHdr(SIWX_OP_SEND_INVAL, 0, 0xfffffffe, 0x5a5a5a5a);
    in.mo = 0x10000;
    in.last = false;
    uint8_t buf[SIWX_DDP_UNTAGGED_HDR_LEN];
    ASSERT_EQ(siwx_ddp_encode(&in, buf), sizeof(buf));
    siwx_ddp_hdr out;
    siwx_term err;
    ASSERT_TRUE(siwx_ddp_decode(buf, sizeof(buf), &out, &err));
    EXPECT_EQ(out.opcode, in.opcode);
    EXPECT_EQ(out.last, in.last);
    EXPECT_EQ(out.inval_stag, in.inval_stag);
    EXPECT_EQ(out.msn, in.msn);
    EXPECT_EQ(out.mo, in.mo);

    siwx_ddp_hdr tin = TaggedHdr(SIWX_OP_WRITE, 0xffffffff, ~0ULL);
    uint8_t tbuf[SIWX_DDP_TAGGED_HDR_LEN];
    ASSERT_EQ(siwx_ddp_encode(&tin, tbuf), sizeof(tbuf));
    ASSERT_TRUE(siwx_ddp_decode(tbuf, sizeof(tbuf), &out, &err));
    EXPECT_TRUE(out.tagged);
    EXPECT_FALSE(out.last);
    EXPECT_EQ(out.stag, 0xffffffffu);
    EXPECT_EQ(out.to, ~0ULL);
}

}  // namespace
